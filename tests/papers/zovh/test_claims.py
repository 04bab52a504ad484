"""zovh's claim checks decide from the numbers they are given (fixed thresholds), only where the profile decides."""
from __future__ import annotations

import math

import numpy as np
import pytest

from flows.zovh.claims import claim_c1, claim_c2, claim_c5, claim_descent, mean_errors
from flows.zovh.experiments import best_lr

FUNCTIONS = ["quadratic", "rosenbrock", "styblinski_tang"]


def errors(zovh: float, reuse: float, baselines=(10.0, 4.0, 8.0)) -> dict:
    table = {}
    for fn in FUNCTIONS:
        table |= {(fn, "near", "zovh", 3): zovh, (fn, "near", "zovh_reuse", 3): reuse}
        table |= {(fn, "near", name, 3): value for name, value in zip(("s1", "s2", "scd"), baselines)}
    return table


@pytest.mark.parametrize("zovh,passed", [(1.9, True), (2.1, False)])
def test_c1_against_the_best_of_s1_s2_scd(zovh, passed):
    claim = claim_c1(errors(zovh, 1.0), FUNCTIONS, 3, decide=True)
    assert claim.ours == pytest.approx(zovh / 4.0) and claim.passed is passed
    assert claim.details["errors"]["quadratic"]["best_baseline"] == "s2"
    assert claim_c1(errors(zovh, 1.0), FUNCTIONS, 3, decide=False).passed is None


def test_c2_takes_the_worst_function():
    table = errors(2.0, 1.0) | {("rosenbrock", "near", "zovh_reuse", 3): 1.6}
    claim = claim_c2(table, FUNCTIONS, 3, decide=True)
    assert claim.ours == pytest.approx(0.8) and claim.passed is False


def descent(reuse: float, sgd: float, zoar: float, walls=(2e-3, 1e-3)) -> dict:
    row = lambda ratio, wall: {"best_lr": 1e-4, "best_median_ratio": ratio, "paper_lr_median_ratio": ratio,  # noqa: E731
                               "wall_per_iteration_s": wall}
    return {fn: {"zovh_reuse": row(reuse, walls[0]), "zo_sgd": row(sgd, walls[1]), "zoar": row(zoar, walls[1]),
                 "zovh": row(reuse, walls[0])} for fn in ("quadratic", "levy", "ackley")}


def test_descent_claims():
    summary = descent(0.1, 0.5, 0.095)
    c3, c4 = claim_descent("C3", summary, "zo_sgd", 0.5, True), claim_descent("C4", summary, "zoar", 1.1, True)
    assert c3.ours == pytest.approx(0.2) and c3.passed is True
    assert c4.ours == pytest.approx(0.1 / 0.095) and c4.passed is True
    assert set(c3.details["ratios"]) == {"quadratic", "levy"}  # Ackley is reported, not gated
    c5 = claim_c5(summary, True)
    assert c5.ours == pytest.approx(2.0) and c5.passed is True
    only_quadratic = {"quadratic": summary["quadratic"]}
    assert claim_descent("C3", only_quadratic, "zo_sgd", 0.5, True).passed is None


def test_best_lr_counts_divergence_as_infinite():
    ratios = np.array([[0.5, 0.1, math.nan], [0.4, 0.2, 0.0]])
    assert best_lr([1e-4, 1e-3, 1e-2], ratios) == (1e-3, pytest.approx(0.15))


def test_mean_errors_groups_rows():
    rows = [{"function": "quadratic", "regime": "near", "estimator": "zovh", "K": 3.0, "frob_err": e} for e in (1.0, 3.0)]
    assert mean_errors(rows) == {("quadratic", "near", "zovh", 3): 2.0}
