"""A crash or hang of SCIP in the child is reported to the caller as an InputError, never propagated."""
from __future__ import annotations

import time

import pytest

from tasks.core.inputs import InputError
from tasks.mip import isolated

MPS = """NAME          tiny
ROWS
 N  Obj
 L  c1
COLUMNS
    MARKER    'MARKER'  'INTORG'
    x         Obj       {objective}   c1        1
    y         Obj       1             c1        1
    MARKER    'MARKER'  'INTEND'
RHS
    RHS       c1        1
BOUNDS
 UP BND       x         1
 UP BND       y         1
ENDATA
"""


def test_a_segfault_while_reading_is_an_input_error(tmp_path):
    crash = tmp_path / "crash.mps"
    crash.write_text("NAME          t\nROWS\n N  Obj\n L  c1\n L  ")  # the MPS reader segfaults here
    with pytest.raises(InputError, match=r"SCIP could not read .*crash\.mps \(it crashed while parsing: signal SIGSEGV\)"):
        isolated.read(crash)


def test_reading_refuses_nan_and_size(tmp_path):
    good, nan = tmp_path / "good.mps", tmp_path / "nan.mps"
    good.write_text(MPS.format(objective="1"))
    nan.write_text(MPS.format(objective="nan"))
    instance = isolated.read(good)
    assert (instance.sense, instance.n_vars, instance.n_cons) == ("minimize", 2, 1)
    with pytest.raises(InputError, match="objective coefficient of x is NaN"):
        isolated.read(nan)
    with pytest.raises(InputError, match="number of variables: 2 is over the limit of 1"):
        isolated.read(good, max_vars=1)


def test_a_solve_past_its_limit_is_killed(tmp_path):
    nan = tmp_path / "nan.mps"  # with a NaN objective SCIP ignores its time limit
    nan.write_text(MPS.format(objective="nan"))
    start = time.monotonic()
    with pytest.raises(InputError, match=r"nan\.mps: SCIP did not stop within its time limit of 0\.5 CPU s"):
        isolated.solve(nan, family="mis", bound=1e4, gap=1e-4, time_limit=0.5, sample_dt=0.02, grace_s=1.0)
    assert time.monotonic() - start < 20
