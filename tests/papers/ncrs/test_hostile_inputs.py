"""`papers ncrs minimize` as a user runs it: a start point from a file with a decaying step, the last and the best
point reported; work past the limit, a bad --x0 or --schedule refused before it starts (one line, exit 2), and a
user function that crashes the interpreter (SIGSEGV) contained and named."""
from __future__ import annotations

import json

import pytest

from tests.cli_table import Row, bad, check_rows, run_rows

pytestmark = pytest.mark.heavy  # a child process that starts `papers`: ~3-5 s

CRASHING = """
import ctypes
def objective(x):
    return ctypes.string_at(0)  # reads address 0: SIGSEGV
"""


def test_a_start_point_a_schedule_and_the_best_point(tmp_path):
    (tmp_path / "userfn.py").write_text("import numpy as np\ndef quad(x):\n    return float(np.sum((x - 0.3) ** 2))\n")
    (tmp_path / "start.csv").write_text("2,-1,0.5\n")
    run = ("ncrs", "minimize", "userfn:quad", "--dim", "3", "--budget", "400", "--alpha", "0.5", "--json")
    results = run_rows([Row((*run, "--x0", "start.csv", "--schedule", "inv-sqrt", "--noise", "0.2"), code=0),
                        Row((*run, "--x0", "2,-1,0.5"), code=0)], cwd=tmp_path)
    assert all(r.code == 0 for r in results), [r.stderr for r in results]
    noisy, exact = (json.loads(r.stdout) for r in results)
    assert noisy["f_start"] == exact["f_start"] == pytest.approx(1.7**2 + 1.3**2 + 0.2**2)
    assert noisy["schedule"] == "inv-sqrt" and noisy["final_step"] == pytest.approx(0.5 / 20)
    assert noisy["f_best"] <= noisy["f_final"] and noisy["f_best"] < noisy["f_start"] and len(noisy["x_best"]) == 3
    # exact comparisons never accept a worse point: the last iterate is the best
    assert exact["f_best"] == exact["f_final"] and exact["x_best"] == exact["x"]


def test_unbounded_work_bad_starts_and_a_crashing_function_are_one_line(tmp_path):
    (tmp_path / "crashing.py").write_text(CRASHING)
    (tmp_path / "userfn.py").write_text("def quad(x):\n    return float(x @ x)\n")
    (tmp_path / "table.csv").write_text("1,2\n3,4\n")
    quad = ("ncrs", "minimize", "userfn:quad", "--dim", "3", "--budget", "10")
    check_rows([
        bad(("ncrs", "minimize", "userfn:quad", "--dim", "1000000", "--budget", "10000000"), "--dim x --budget", "limit"),
        bad(("ncrs", "minimize", "crashing:objective", "--dim", "3", "--budget", "10"),
            "crashing:objective", "the objective crashed (signal SIGSEGV)"),
        bad((*quad, "--x0", "1,2"), "--x0", "2 values, expected --dim 3"),
        bad((*quad, "--x0", "1,nan,2"), "--x0", "'nan'"),
        bad((*quad, "--x0", "1,1e999,2"), "--x0", "not finite"),
        bad((*quad, "--x0", "nosuch.npy"), "--x0", "nosuch.npy"),
        bad((*quad, "--x0", "table.csv"), "--x0", "2 x 2 table"),
        bad((*quad, "--schedule", "cosine"), "--schedule", "'cosine'"),
    ], cwd=tmp_path)
