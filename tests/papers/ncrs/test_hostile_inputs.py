"""`papers ncrs minimize`: work past the limit is refused before it starts, and a user function that crashes the
interpreter (SIGSEGV) is contained and named."""
from __future__ import annotations

import pytest

from tests.cli_table import bad, check_rows

pytestmark = pytest.mark.heavy  # a child process that starts `papers`: ~3-5 s

CRASHING = """
import ctypes
def objective(x):
    return ctypes.string_at(0)  # reads address 0: SIGSEGV
"""


def test_unbounded_work_and_a_crashing_function_are_one_line(tmp_path):
    (tmp_path / "crashing.py").write_text(CRASHING)
    (tmp_path / "userfn.py").write_text("def quad(x):\n    return float(x @ x)\n")
    check_rows([
        bad(("ncrs", "minimize", "userfn:quad", "--dim", "1000000", "--budget", "10000000"), "--dim x --budget", "limit"),
        bad(("ncrs", "minimize", "crashing:objective", "--dim", "3", "--budget", "10"),
            "crashing:objective", "the objective crashed (signal SIGSEGV)"),
    ], cwd=tmp_path)
