"""RRDNGD and the [3P] theory schedules (tasks/comparison/dueling.py), the E3 boundary-optimum target and the
reports R6 (boundary optimum) and R7 (RRDNGD per phase)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from flows.riemannian_dueling.claims import claims, report_r7
from flows.riemannian_dueling.experiments import simplex_run
from flows.riemannian_dueling.pipeline import simplex_targets
from tasks.comparison.dueling import (convex_theory_schedule, nonconvex_theory_schedule, normalised_constant,
                                      rrdngd, rrdngd_phase_length)
from tasks.comparison.geometry import SimplexGeometry
from tasks.comparison.objectives import SquaredDistance
from tasks.comparison.oracles import ComparisonOracle


def test_theory_schedules_follow_the_formulas():
    step, nu = nonconvex_theory_schedule(400, 10, 0.1)
    assert step(0) == step(399) == pytest.approx(1 / 20)
    assert nu == pytest.approx(normalised_constant(10) * math.sqrt(2 * math.pi) * 0.1 / 40)
    step, nu = convex_theory_schedule(100, 4, 0.01, 2.0)
    eta = math.sqrt(0.01) / (4 * math.sqrt(4 * math.pi))
    assert step(0) == step(99) == pytest.approx(eta)
    assert nu == pytest.approx(0.01**1.5 / (4 * math.sqrt(2) * 4 * (math.sqrt(2) + 100 * eta) ** 2))
    assert rrdngd_phase_length(1) == 203 and rrdngd_phase_length(15) == 3017


def _flat_rrdngd(phases: int, reverse: bool = False, seed: int = 3):
    """RRDNGD on ||x - c||^2 / 2 over the zero-sum hyperplane through the simplex (flat, 1-strongly convex, L = 1)."""
    c = np.array([0.2, 0.3, 0.5])
    x0 = np.array([1.0, 0.0, 0.0])
    geometry, cost = SimplexGeometry(3), SquaredDistance(c)
    oracle = ComparisonOracle(cost, rng=np.random.default_rng(seed), reverse=reverse)
    return rrdngd(geometry, oracle, x0, phases, float(np.sum((x0 - c) ** 2)), 1.0, np.random.default_rng(seed)), c


def test_rrdngd_phases_halve_the_bound_and_approach_the_minimiser():
    result, c = _flat_rrdngd(3)
    length = rrdngd_phase_length(2)
    D0 = float(np.sum((np.array([1.0, 0, 0]) - c) ** 2))
    assert result.queries == result.iterations == 3 * length and result.extra["phase_length"] == length
    assert np.allclose(result.extra["D"], [D0, D0 / 2, D0 / 4]) and np.allclose(result.extra["eps"], [D0 / 4, D0 / 8, D0 / 16])
    assert np.array_equal(result.extra["ends"][-1], result.x)
    assert abs(result.x.sum() - 1) < 1e-12  # every step stays in the hyperplane
    assert all(np.sum((end - c) ** 2) <= D for end, D in zip(result.extra["ends"], result.extra["D"][1:] + [D0 / 8]))
    again, _ = _flat_rrdngd(3)
    assert np.array_equal(again.x, result.x)  # same seed, same trajectory
    reversed_run, _ = _flat_rrdngd(1, reverse=True)
    assert np.sum((reversed_run.x - c) ** 2) > D0  # ascent moves away


def test_boundary_target_has_its_optimum_on_a_face():
    c, c_boundary, x_star = simplex_targets(16)
    assert abs(c.sum() - 1) < 1e-12 and c.min() > 0  # the interior target
    assert abs(c_boundary.sum() - 1) < 1e-12 and c_boundary.min() < 0
    assert abs(x_star.sum() - 1) < 1e-12 and x_star.min() == 0 and np.sum(x_star == 0) >= 4
    grad = x_star - c_boundary  # KKT: the gradient is smallest (equal) on the support, no smaller off it
    support = x_star > 0
    assert np.ptp(grad[support]) < 1e-12 and grad[~support].min() >= grad[support].max() - 1e-12
    f_star = float(SquaredDistance(c_boundary)(x_star))
    run = simplex_run(c_boundary, np.eye(16)[0], 20, 1.0, np.sqrt(2), seed=1, f_star=f_star)
    assert run["projections"] == 0 and run["subopt"].min() >= -1e-12 and run["subopt"][-1] < run["subopt"][0]


def _boundary(ends):
    horizons = [10, 20, 40, 80]
    return {"horizons": horizons, "subopt": {T: [e * 1.1, e, e * 0.9] for T, e in zip(horizons, ends)},
            "projections": 0, "max_sum_error": 1e-16, "min_x": 0.0, "comparisons": {}, "lmo_calls": 80}


@pytest.mark.heavy  # C1-C4's bootstraps run too: ~2-3 s
def test_r6_and_r7_are_reported_without_a_gate():
    from tests.papers.riemannian_dueling.test_claims import _inputs

    rayleigh, karcher, simplex = _inputs()
    phases = {"dist2": [[0.1, 0.12], [0.05, 0.06], [0.025, 0.03]], "bound": [1.0, 0.5, 0.25],
              "rel_gap": [[1e-2] * 2, [5e-3] * 2, [2.5e-3] * 2], "phase_length": 3017, "start_dist2": 1.0}
    karcher[5]["rrdngd_phases"] = phases
    found = claims(rayleigh, karcher, simplex | {"boundary": _boundary([0.02, 0.01, 0.005, 0.0025])}, deciding=True)
    assert [c.id for c in found] == ["C1", "C2", "C3", "C4", "R5", "R6", "R7"]
    r6, r7 = found[5:]
    assert r6.verdict.word == r7.verdict.word == "report" and r6.ours == pytest.approx(-1.0)
    assert r7.ours == pytest.approx(-1.0) and r7.details["median_dist2_per_phase"] == pytest.approx([0.11, 0.055, 0.0275])
    assert report_r7(5, karcher[5] | {"rrdngd_phases": phases | {"dist2": [[0.1], [0.1]]}}).ours == pytest.approx(0.0)
    assert [c.id for c in claims(rayleigh, {5: {k: v for k, v in karcher[5].items() if k != "rrdngd_phases"}},
                                 simplex, deciding=True)] == ["C1", "C2", "C3", "C4", "R5"]


def test_e1_runs_the_theory_schedule_beside_the_practical_one_when_asked():
    from flows.riemannian_dueling.experiments import rayleigh_runs
    from tests.papers.riemannian_dueling.test_claims import BASELINES
    from tasks.comparison.objectives import rayleigh_matrix

    rng = np.random.default_rng(0)
    A, x0 = rayleigh_matrix(12, rng), np.eye(12)[0]
    plain = rayleigh_runs(A, x0, 480, 0.3, 1e-4, BASELINES, seed=7)
    with_theory = rayleigh_runs(A, x0, 480, 0.3, 1e-4, BASELINES, seed=7, theory_eps=0.1)
    assert "rdngd_theory" not in plain and np.array_equal(plain["rdngd"]["f"], with_theory["rdngd"]["f"])
    theory = with_theory["rdngd_theory"]
    assert theory["queries"][-1] == 480 and theory["f"][-1] < theory["f"][0]
