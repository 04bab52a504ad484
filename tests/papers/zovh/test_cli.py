"""`papers zovh estimate` as a user runs it: a good function and point, and a table of bad inputs."""
from __future__ import annotations

import json

import numpy as np
import pytest

from tests.cli_table import Row, check_rows, run_rows

MODULE = """
import numpy as np
def quad(x):
    return 0.5 * float(x @ x) + 3.0
def nan(x):
    return float("nan")
def vector(x):
    return x
def boom(x):
    raise RuntimeError("kaput")
"""


@pytest.mark.heavy  # two child processes: ~4 s (test_shared_outputs.py runs the command in the unit tier)
def test_estimate_and_bad_inputs(tmp_path):
    (tmp_path / "userfn.py").write_text(MODULE)
    np.save(tmp_path / "x.npy", np.linspace(-1, 1, 10))
    np.save(tmp_path / "x2d.npy", np.ones((3, 3)))
    np.save(tmp_path / "xnan.npy", np.array([1.0, np.nan]))
    np.save(tmp_path / "big.npy", np.zeros(6000))
    (tmp_path / "x.txt").write_text("1 2 three\n")
    x, out = str(tmp_path / "x.npy"), str(tmp_path / "H.npy")
    ok = ["zovh", "estimate", "userfn:quad", "--at", x, "--queries", "5", "--out", out, "--json"]
    # the user module is imported from the working directory
    result, again = run_rows([Row(tuple(ok), code=0)] * 2, cwd=tmp_path)
    assert result.code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["queries_used"] == 5 and summary["d"] == 10
    H = np.load(out)
    assert H.shape == (10, 10) and np.allclose(H, H.T)
    assert json.loads(again.stdout)["frobenius_norm"] == summary["frobenius_norm"]  # same seed, same estimate

    base = ("zovh", "estimate")
    check_rows([
        Row(base + ("userfn:quad", "--at", x, "--queries", "2"), names=("--queries",)),
        Row(base + ("userfn:quad", "--at", x, "--queries", "5", "--method", "newton"), names=("--method",)),
        Row(base + ("userfn:quad", "--at", x, "--queries", "5", "--mu", "-1"), names=("--mu",)),
        Row(base + ("userfn:quad", "--at", x, "--queries", "5", "--mu", "inf"), names=("--mu",)),
        Row(base + ("userfn:quad", "--at", str(tmp_path / "none.npy"), "--queries", "5"), names=("--at", "no such file")),
        Row(base + ("userfn:quad", "--at", str(tmp_path / "x2d.npy"), "--queries", "5"), names=("1-D",)),
        Row(base + ("userfn:quad", "--at", str(tmp_path / "xnan.npy"), "--queries", "5"), names=("non-finite",)),
        Row(base + ("userfn:quad", "--at", str(tmp_path / "big.npy"), "--queries", "5"), names=("limit",)),
        Row(base + ("userfn:quad", "--at", str(tmp_path / "x.txt"), "--queries", "5"), names=("line 1",)),
        Row(base + ("userfn:quad", "--at", x, "--queries", "5", "--out", str(tmp_path / "no" / "H.npy")), names=("--out",)),
        Row(base + ("nosuchmodule:f", "--at", x, "--queries", "5"), names=("nosuchmodule",)),
        Row(base + ("userfn:missing", "--at", x, "--queries", "5"), names=("missing",)),
        Row(base + ("userfn", "--at", x, "--queries", "5"), names=("MODULE:FUNCTION",)),
        Row(base + ("userfn:nan", "--at", x, "--queries", "5"), names=("non-finite",)),
        Row(base + ("userfn:vector", "--at", x, "--queries", "5"), names=("one real number",)),
        Row(base + ("userfn:boom", "--at", x, "--queries", "5"), names=("kaput",)),
    ], cwd=tmp_path)
