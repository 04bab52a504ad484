"""The riemannian_dueling claim checks on hand-made summaries, and one instance's runs: determinism and the order
of the methods on E1."""
from __future__ import annotations

import numpy as np
import pytest

from flows.riemannian_dueling.claims import claims, loglog_slope
from flows.riemannian_dueling.experiments import rayleigh_runs, simplex_run
from flows.riemannian_dueling.params import Baselines
from flows.riemannian_dueling.summaries import rayleigh_seed
from tasks.comparison.objectives import rayleigh_matrix

BASELINES = Baselines(rzo_samples=5, rzo_mu=1e-4, rzo_eta_scale=1.0, rgd_iterations=20)


def _cell(gap, hit, **extra):
    return {"gap_at_claim": [gap] * 3, "gap_at_budget": [gap / 2] * 3, "hit": [hit] * 3, "wall_time_s": [0.1] * 3} | extra


def _inputs(gap50=0.01, control=0.9, B100=500.0, karcher_gap=1e-4, slope_end=0.001):
    rayleigh = {n: {m: _cell(gap50 if m != "reversed" else control, {25: 120.0, 50: 250.0, 100: B100}[n])
                    for m in ("rdngd", "reversed", "euclidean_ngd", "rzo", "rgd")} for n in (25, 50, 100)}
    karcher = {5: {m: {"rel_gap": [karcher_gap] * 2, "min_eig": [0.3] * 2, "increase": [-1.0 if m != "reversed" else 2.0] * 2}
                   for m in ("rdngd", "reversed", "euclidean_ngd", "rzo", "rgd")}}
    horizons = [10, 20, 40, 80]
    simplex = {"horizons": horizons, "subopt": dict(zip(horizons, ([0.02] * 6, [0.01] * 6, [0.004] * 6, [slope_end] * 6))),
               "projections": 0, "max_sum_error": 2e-16, "min_x": 0.0, "comparisons": {}, "lmo_calls": 80}
    return rayleigh, karcher, simplex


def test_claims_pass_and_fail_as_the_spec_says():
    c1, c2, c3, c4, r5 = claims(*_inputs(), decide=True)
    assert (c1.passed, c2.passed, c3.passed, c4.passed) == (True, True, True, True)
    assert c2.ours == pytest.approx(2.0) and c2.details["exponent"] == pytest.approx(loglog_slope([25, 50, 100], [120, 250, 500]))
    assert r5.passed is None and r5.threshold is None
    c1, c2, c3, c4, _ = claims(*_inputs(gap50=0.2, B100=1000.0, karcher_gap=1e-2, slope_end=0.02), decide=True)
    assert (c1.passed, c2.passed, c3.passed, c4.passed) == (False, False, False, False)
    c1, *_ = claims(*_inputs(control=0.3), decide=True)  # the reversed control must stay far
    assert c1.passed is False
    assert all(c.passed is None for c in claims(*_inputs(), decide=False))


def test_same_seed_same_numbers_and_rdngd_against_its_baselines():
    rng = np.random.default_rng(0)
    A = rayleigh_matrix(12, rng)
    x0 = rng.standard_normal(12)
    x0 /= np.linalg.norm(x0)
    first, second = (rayleigh_runs(A, x0, 480, 0.3, 1e-4, BASELINES, seed=7) for _ in range(2))
    for method in first:
        assert np.array_equal(first[method]["f"], second[method]["f"])
    f_star = -0.5
    summary = rayleigh_seed(first, f_star, 12, 40, 0.05)
    assert summary["rdngd"]["gap_at_claim"] < 0.2 < summary["reversed"]["gap_at_claim"]
    assert summary["rgd"]["gap_at_claim"] < 1e-3  # the first-order reference
    run = simplex_run(np.arange(1, 9) / 36, np.eye(8)[0], 8, 1.0, np.sqrt(2), seed=1)
    assert run["projections"] == 0 and run["subopt"][-1] < run["subopt"][0] and len(run["subopt"]) == 9
