"""`papers zovh estimate --out` on a shared machine (tests/output_table.py): a planted link, a FIFO and the input
point itself are refused before any work; a good write is exactly the named .npy file, with the umask's mode."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from tests.output_table import assert_link_refused, assert_refused, assert_written, output_case
from tests.platform.second_user import other  # noqa: F401

ESTIMATE = ("zovh", "estimate", "userfn:quad", "--at", "x.npy", "--queries", "5")


def inputs(work: Path) -> None:
    """A point, the function's module and a FIFO."""
    np.save(work / "x.npy", np.linspace(-1, 1, 4))
    (work / "userfn.py").write_text("def quad(x):\n    return 0.5 * float(x @ x)\n")
    os.mkfifo(work / "fifo.npy")


def rows(shared: Path) -> dict[str, tuple[str, ...]]:
    return {
        "link": (*ESTIMATE, "--out", str(shared / "zovh.npy")),
        "fifo": (*ESTIMATE, "--out", "fifo.npy"),
        "input": (*ESTIMATE, "--out", "x.npy"),
        "write": (*ESTIMATE, "--out", "H.npy"),
        "write-no-suffix": (*ESTIMATE, "--out", "Hraw"),
    }


@pytest.fixture(scope="module")
def case(tmp_path_factory, other):  # noqa: F811 - the fixture
    yield from output_case(tmp_path_factory, other, inputs, rows, links=("zovh.npy",))


def test_a_planted_link_a_fifo_and_the_input_are_refused(case):
    assert_link_refused(case, "link", "--out")
    assert_refused(case.results["fifo"], "--out", "not a regular file")
    assert_refused(case.results["input"], "--out", "is the input", "--at x.npy")
    assert np.array_equal(np.load(case.work / "x.npy"), np.linspace(-1, 1, 4))


def test_npy_output_is_exactly_the_named_file(case, tmp_path):
    for row in ("write", "write-no-suffix"):
        assert case.results[row].code == 0, case.results[row].stderr
    np.save(tmp_path / "direct.npy", np.load(case.work / "H.npy"))
    assert_written(case, "H.npy", (tmp_path / "direct.npy").read_bytes())
    assert_written(case, "Hraw", (tmp_path / "direct.npy").read_bytes())
    assert not (case.work / "Hraw.npy").exists()  # the file named, not np.save's name + .npy
