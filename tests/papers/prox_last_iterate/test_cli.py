"""`papers prox-last-iterate solve` as a user runs it: a Lasso and a network Lasso from files, and a table of bad inputs."""
from __future__ import annotations

import json

import numpy as np
import pytest

from tests.cli_table import Row, check_rows, run_rows


def write(tmp_path, name: str, spec: dict) -> str:
    (tmp_path / name).write_text(json.dumps(spec))
    return str(tmp_path / name)


@pytest.mark.heavy  # two child processes: ~4 s (test_shared_outputs.py runs the command in the unit tier)
def test_solve_and_bad_inputs(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 5))
    np.save(tmp_path / "X.npy", X)
    np.savetxt(tmp_path / "y.csv", X @ np.array([1.0, 0, -1, 0, 0.5]) + 0.1 * rng.standard_normal(60))
    np.save(tmp_path / "NX.npy", rng.standard_normal((4, 6, 2)))
    np.save(tmp_path / "Ny.npy", rng.standard_normal((4, 6)))
    np.savetxt(tmp_path / "edges.csv", np.array([[0, 1], [1, 2], [2, 3]]), fmt="%d", delimiter=",")
    np.savetxt(tmp_path / "loop.csv", np.array([[0, 1], [2, 2]]), fmt="%d", delimiter=",")
    np.savetxt(tmp_path / "far.csv", np.array([[0, 1], [2, 7]]), fmt="%d", delimiter=",")
    lasso = {"problem": "lasso", "X": "X.npy", "y": "y.csv", "lam": 0.05, "iterations": 3000, "reference": True}
    network = {"problem": "network_lasso", "X": "NX.npy", "y": "Ny.npy", "edges": "edges.csv", "lam": 0.5,
               "iterations": 2000, "reference": True}
    good = [write(tmp_path, "lasso.json", lasso), write(tmp_path, "network.json", network)]
    results = run_rows([Row(("prox-last-iterate", "solve", path, "--json", "--out", str(tmp_path / f"x{k}.npy")), code=0)
                        for k, path in enumerate(good)])
    for result in results:
        assert result.code == 0, result.stderr
        summary = json.loads(result.stdout)
        assert summary["F_last"] >= summary["F_star"] - 1e-8 and summary["F_last"] - summary["F_star"] < 0.5
    assert np.load(tmp_path / "x0.npy").shape == (5,) and np.load(tmp_path / "x1.npy").shape == (4, 2)

    bad = lambda name, **change: write(tmp_path, name, {**lasso, **change})  # noqa: E731
    check_rows([
        Row(("prox-last-iterate", "solve", str(tmp_path / "none.json")), names=("no such file",)),
        Row(("prox-last-iterate", "solve", write(tmp_path, "list.json", [1, 2])), names=("JSON object",)),
        Row(("prox-last-iterate", "solve", bad("kind.json", problem="svm")), names=("'problem'",)),
        Row(("prox-last-iterate", "solve", bad("lam.json", lam=-1)), names=("'lam'",)),
        Row(("prox-last-iterate", "solve", bad("lamstr.json", lam="big")), names=("'lam'",)),
        Row(("prox-last-iterate", "solve", bad("iters.json", iterations=10**9)), names=("iterations", "limit")),
        Row(("prox-last-iterate", "solve", bad("extra.json", momentum=0.9)), names=("momentum",)),
        Row(("prox-last-iterate", "solve", bad("ymiss.json", y="missing.csv")), names=("no such file",)),
        Row(("prox-last-iterate", "solve", bad("yshape.json", y="Ny.npy")), names=("1-D",)),
        Row(("prox-last-iterate", "solve", write(tmp_path, "loop.json", {**network, "edges": "loop.csv"})), names=("itself",)),
        Row(("prox-last-iterate", "solve", write(tmp_path, "far.json", {**network, "edges": "far.csv"})), names=("0..3",)),
        Row(("prox-last-iterate", "solve", write(tmp_path, "noedges.json", {k: v for k, v in network.items() if k != "edges"})),
            names=("edges",)),
    ])
