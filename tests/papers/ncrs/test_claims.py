"""The ncrs claim checks on hand-made cells, the step calibration, and determinism of a calibrated batch."""
from __future__ import annotations

import numpy as np
import pytest

from flows.ncrs.claims import claims, slope
from flows.ncrs.experiments import calibrated_run, make_instances, pick_step, voting_run
from tasks.comparison.oracles import Noise


def _cells(N20=400.0, N200=440.0, N200_small=4000.0):
    cells = {}
    for d, n in ((20, N20), (63, 420.0), (200, N200)):
        for m in ("ncrs", "ngd", "exact", "cma_es", "one_plus_one"):
            cells[(m, d, 0.4)] = {"hit": np.array([n] * 5), "step": 0.05}
        cells[("ncrs", d, 0.1)] = cells[("ngd", d, 0.1)] = {"hit": np.array([N200_small] * 5), "step": 0.02}
    return cells


def _voting(single=0.3, voting=0.1):
    run = lambda w: {"wrong_fraction": np.array([w] * 3), "best_grad": np.ones(3), "hit": np.array([1.0, np.inf, 3.0])}
    return {"sqrt_gap": {"single": run(single), "voting": run(voting)},
            "bradley_terry": {"single": run(single), "voting": run(voting)}}


def test_claims_pass_and_fail_as_the_spec_says():
    k_cells = {2: {"hit": np.array([100.0]), "step": 0.05}, 8: {"hit": np.array([380.0]), "step": 0.02}}
    c1, c2, c3, r4 = claims(_cells(), [20, 63, 200], [0.1, 0.4], _voting(), 9, k_cells, decide=True)
    assert (c1.passed, c2.passed, c3.passed) == (True, True, True)
    assert c1.ours == pytest.approx(1.1) and c1.details["slope_log_N_vs_log_d"] == pytest.approx(
        slope([20, 63, 200], [400, 420, 440]))
    assert c3.ours == pytest.approx(1 / 3) and c3.details["by_oracle"]["sqrt_gap"]["reached_single"] == 2
    assert r4.ours == pytest.approx(3.8) and r4.passed is None
    c1, c2, c3, _ = claims(_cells(N200=800.0, N200_small=1600.0), [20, 63, 200], [0.1, 0.4], _voting(voting=0.25), 9,
                           k_cells, decide=True)
    assert (c1.passed, c2.passed, c3.passed) == (False, False, False)
    never = _cells()
    never[("ncrs", 200, 0.4)]["hit"] = np.full(5, np.inf)  # not reached: no ratio, a failed claim
    c1, *_ = claims(never, [20, 63, 200], [0.1, 0.4], _voting(), 9, k_cells, decide=True)
    assert c1.ours is None and c1.passed is None


def test_the_step_is_picked_by_median_n_then_gradient_norm():
    hits = np.array([[np.inf, np.inf], [300.0, 500.0], [300.0, 500.0]])
    best = np.array([[0.2, 0.3], [0.05, 0.05], [0.01, 0.01]])
    assert pick_step([0.02, 0.05, 0.1], hits, best)[0] == 0.1


def test_calibrated_runs_and_voting_runs_are_deterministic():
    inst, cal = make_instances(15, 2, [0, 1, 2], 0, 3.0), make_instances(15, 2, [100], 0, 3.0)
    a, b = (calibrated_run("ncrs", inst, cal, Noise("margin", p=0.4), [0.05, 0.1], 1500, 0.15, 3, 1e-3) for _ in range(2))
    assert np.array_equal(a["hit"], b["hit"]) and a["step"] == b["step"] and np.array_equal(a["best_grad"], b["best_grad"])
    single = voting_run(inst, Noise("sqrt_gap"), 0.05, 1, 900, 0.15, 5)
    voting = voting_run(inst, Noise("sqrt_gap"), 0.05, 9, 900, 0.15, 5)
    assert single["decisions"] == 900 and voting["decisions"] == 100
    assert 0 <= voting["wrong_fraction"].mean() <= 1
