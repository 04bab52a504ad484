"""`papers riemannian-dueling minimize` and `papers ncrs minimize` on a user's module: good runs (text and --json) and the bad
references, values and options, each one line naming the culprit, exit 2."""
from __future__ import annotations

import json

import numpy as np
import pytest

from tests.cli_table import Row, check_rows, run_rows

USER_MODULE = """import numpy as np
value = 3
def rayleigh(x):
    return -float(x @ np.diag(np.arange(1.0, len(x) + 1)) @ x)
def spd_distance(X):
    return float(np.sum((X - 2 * np.eye(len(X))) ** 2))
def quad(x):
    return float(np.sum((np.ravel(x) - 0.3) ** 2))
def nan(x):
    return float('nan')
def vector(x):
    return x
def fails(x):
    raise ValueError('operands could not be broadcast')
"""


@pytest.mark.heavy  # a table of good and bad runs in a child process: ~4-8 s
def test_minimize_good_and_bad(tmp_path):
    (tmp_path / "userobj.py").write_text(USER_MODULE)
    d, n = ("riemannian-dueling", "minimize"), ("ncrs", "minimize")
    rows = [Row((*d, "userobj:rayleigh", "--dim", "6", "--budget", "600", "--json"), code=0),
            Row((*d, "userobj:spd_distance", "--manifold", "spd", "--dim", "3", "--budget", "200", "--noise", "0.1"),
                code=0),
            Row((*d, "userobj:quad", "--manifold", "stiefel", "--dim", "4", "--budget", "100"), code=0),
            Row((*d, "userobj:quad", "--manifold", "simplex", "--dim", "4", "--budget", "5000", "--json"), code=0),
            Row((*n, "userobj:quad", "--dim", "5", "--budget", "900", "--votes", "3", "--json"), code=0),
            Row((*d, "userobj:quad", "--manifold", "stiefel", "--dim", "4", "--stiefel-p", "3", "--directions", "3",
                 "--budget", "61", "--json"), code=0)]
    results = run_rows(rows, cwd=tmp_path)
    assert all(r.code == 0 for r in results), [r.stderr for r in results]
    sphere, simplex, ncrs, stiefel = (json.loads(results[i].stdout) for i in (0, 3, 4, 5))
    assert sphere["comparisons"] == 600 and sphere["f_final"] < sphere["f_start"] and len(sphere["x"]) == 6
    assert sphere["f_best"] <= min(sphere["f_final"], sphere["f_start"]) and len(sphere["x_best"]) == 6
    assert simplex["method"] == "rdfw" and abs(sum(simplex["x"]) - 1) < 1e-12 and simplex["comparisons"] <= 5000
    assert abs(sum(simplex["x_best"]) - 1) < 1e-12 and simplex["f_best"] <= simplex["f_final"]
    frame = np.array(stiefel["x_best"])
    assert stiefel["stiefel_p"] == 3 and frame.shape == (4, 3) and np.allclose(frame.T @ frame, np.eye(3))
    assert stiefel["directions"] == 3 and stiefel["iterations"] == 20 and stiefel["comparisons"] == 60
    assert ncrs["comparisons"] == 900 and ncrs["iterations"] == 300 and ncrs["f_final"] < ncrs["f_start"]
    check_rows([
        Row((*d, "nosuch:f", "--dim", "3", "--budget", "10"), names=("nosuch",)),
        Row((*d, "userobj:missing", "--dim", "3", "--budget", "10"), names=("missing",)),
        Row((*d, "userobj:value", "--dim", "3", "--budget", "10"), names=("not callable",)),
        Row((*d, "userobj", "--dim", "3", "--budget", "10"), names=("MODULE:FUNCTION",)),
        Row((*d, "userobj:nan", "--dim", "3", "--budget", "10"), names=("userobj:nan", "not finite")),
        Row((*d, "userobj:vector", "--dim", "3", "--budget", "10"), names=("userobj:vector", "3 values")),
        Row((*d, "userobj:fails", "--dim", "3", "--budget", "10"), names=("userobj:fails", "ValueError")),
        Row((*d, "userobj:quad", "--manifold", "torus", "--dim", "3", "--budget", "10"), names=("--manifold", "torus")),
        Row((*d, "userobj:quad", "--dim", "1", "--budget", "10"), names=("--dim",)),
        Row((*d, "userobj:quad", "--manifold", "spd", "--dim", "5000", "--budget", "10"), names=("--dim", "200")),
        Row((*d, "userobj:quad", "--dim", "3", "--budget", "10000000000"), names=("--budget", "10,000,000")),
        Row((*d, "userobj:quad", "--dim", "3", "--budget", "0"), names=("--budget",)),
        Row((*d, "userobj:quad", "--dim", "3", "--budget", "10", "--noise", "0.7"), names=("--noise", "0.7")),
        Row((*d, "userobj:quad", "--dim", "3", "--budget", "10", "--step", "inf"), names=("--step", "inf")),
        Row((*d, "userobj:quad", "--manifold", "simplex", "--dim", "40", "--budget", "10"), names=("--budget", "RDFW")),
        Row((*d, "userobj:quad", "--manifold", "stiefel", "--dim", "4", "--stiefel-p", "5", "--budget", "10"),
            names=("--stiefel-p", "5", "p <= n")),
        Row((*d, "userobj:quad", "--manifold", "stiefel", "--dim", "4", "--stiefel-p", "0", "--budget", "10"),
            names=("--stiefel-p", "0")),
        Row((*d, "userobj:quad", "--manifold", "stiefel", "--dim", "5000", "--stiefel-p", "300", "--budget", "10"),
            names=("--stiefel-p", "300", "1,000,000")),
        Row((*d, "userobj:quad", "--dim", "4", "--stiefel-p", "2", "--budget", "10"), names=("--stiefel-p", "sphere")),
        Row((*d, "userobj:quad", "--dim", "4", "--directions", "11", "--budget", "10"), names=("--directions", "11")),
        Row((*d, "userobj:quad", "--dim", "4", "--directions", "-1", "--budget", "10"), names=("--directions", "-1")),
        Row((*d, "userobj:quad", "--manifold", "simplex", "--dim", "4", "--directions", "2", "--budget", "5000"),
            names=("--directions", "RDFW")),
        Row((*n, "userobj:fails", "--dim", "3", "--budget", "10"), names=("userobj:fails",)),
        Row((*n, "userobj:quad", "--dim", "3", "--budget", "10", "--votes", "4"), names=("--votes", "4")),
        Row((*n, "userobj:quad", "--dim", "3", "--budget", "10", "--alpha", "nan"), names=("--alpha", "nan")),
        Row((*n, "userobj:quad", "--dim", "2000000", "--budget", "10"), names=("--dim", "1,000,000")),
        Row((*n, "userobj:quad", "--dim", "3", "--budget", "10", "--seed", "-1"), names=("--seed",)),
    ], cwd=tmp_path)


def test_the_manifold_choices_are_the_geometry_modules():
    from flows.riemannian_dueling import cli
    from tasks.comparison.geometry import MANIFOLDS

    assert cli.MANIFOLDS == MANIFOLDS


def test_best_so_far_keeps_the_least_true_value():
    from flows.riemannian_dueling.cli import BestSoFar

    best = BestSoFar(lambda x: float(np.sum(x ** 2)))
    for x in ([2.0], [0.5], [1.0], [-0.5]):
        best(np.array(x), 0, {})
    assert best.f == 0.25 and best.x.tolist() == [0.5]  # the first of the tied minima


def test_stiefel_p_reaches_the_geometry():
    from tasks.comparison.geometry import make_geometry

    assert make_geometry("stiefel", 6, 4).shape == (6, 4) and make_geometry("stiefel", 6).shape == (6, 2)
