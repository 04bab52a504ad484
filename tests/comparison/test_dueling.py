"""RDNGD and RDFW (spec §10): the direction identity, oracle consistency, invariance, the circle,
negative controls, projection-free feasibility; RZO and pymanopt's RGD as the baselines."""
from __future__ import annotations

import numpy as np
import pytest

from tasks.comparison.dueling import SqrtDecay, direction_constant, normalised_constant, rdfw, rdngd
from tasks.comparison.geometry import SimplexGeometry, SphereGeometry, SPDGeometry
from tasks.comparison.objectives import KarcherCost, Rayleigh, SquaredDistance, karcher_mean, rayleigh_matrix, spd_samples
from tasks.comparison.oracles import ComparisonOracle, ValueOracle
from tasks.comparison.trace import Tracker
from tasks.comparison.zeroth_order import rgd, rzo


@pytest.mark.parametrize("d", [2, 5, 10, 50])
def test_direction_identity_by_monte_carlo(d):
    rng = np.random.default_rng(d)
    g = rng.standard_normal(d)
    u = rng.standard_normal((100_000, d))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    samples = np.sign(u @ g)[:, None] * u
    mean, se = samples.mean(0), samples.std(0) / np.sqrt(len(u))
    assert np.all(np.abs(mean - direction_constant(d) * g / np.linalg.norm(g)) < 4 * se)
    along = mean @ g / np.linalg.norm(g)
    assert np.linalg.norm(mean - along * g / np.linalg.norm(g)) < 4 * np.sqrt(d) * se.max()
    assert abs(normalised_constant(10_000) - np.sqrt(2 / np.pi)) < 1e-4


def test_probes_at_tiny_radius_return_the_sign_of_the_directional_derivative():
    rng = np.random.default_rng(0)
    A = rayleigh_matrix(20, rng)
    cost, sphere = Rayleigh(A), SphereGeometry(20)
    oracle = ComparisonOracle(cost, rng=rng)
    agree = total = 0
    for _ in range(3000):
        x = sphere.manifold.random_point()
        u = sphere.unit_tangent(x, rng)
        slope = (-A @ x) @ u  # the Riemannian gradient is the tangent part of -A x
        if abs(slope) > 1e-3:
            total += 1
            agree += oracle.worse(sphere.exp(x, 1e-8 * u), sphere.exp(x, -1e-8 * u)) == np.sign(slope)
    assert agree / total > 0.999


def _rayleigh_run(transform=lambda v: v, reverse=False, budget=800, n=20):
    rng = np.random.default_rng(1)
    A = rayleigh_matrix(n, rng)
    x0 = rng.standard_normal(n)
    x0 /= np.linalg.norm(x0)
    cost = Rayleigh(A)
    tracker = Tracker({"f": cost})
    oracle = ComparisonOracle(lambda x: transform(cost(x)), rng=np.random.default_rng(2), reverse=reverse)
    result = rdngd(SphereGeometry(n), oracle, x0, budget, SqrtDecay(0.3), 1e-4, np.random.default_rng(3), record=tracker)
    return result, tracker.arrays()["f"], cost


def test_rdngd_descends_and_its_trajectory_ignores_monotone_transforms():
    result, f, cost = _rayleigh_run()
    assert result.queries == 800 and result.iterations == 800
    assert (f[-1] - cost.minimum) < 0.05 * (f[0] - cost.minimum)
    for transform in (lambda v: 3 * v + 7, np.exp):
        assert np.array_equal(_rayleigh_run(transform)[0].x, result.x)


def test_negative_controls_reversed_oracle_ascends_and_no_budget_no_progress():
    _, f, _ = _rayleigh_run(reverse=True)
    assert f[-1] > f[0]
    result, f, _ = _rayleigh_run(budget=0)
    assert result.iterations == 0 and len(f) == 1


def test_on_the_circle_each_comparison_is_the_derivative_sign_and_a_constant_step_oscillates():
    """S^1 (d = 1): f(theta) = -cos(theta - 1); a constant step eta ends within eta of the minimiser."""
    circle = SphereGeometry(2)
    cost = lambda x: -(x @ np.array([np.cos(1.0), np.sin(1.0)]))
    x = np.array([1.0, 0.0])
    eta = 0.01
    oracle = ComparisonOracle(cost, rng=np.random.default_rng(0))
    result = rdngd(circle, oracle, x, 500, SqrtDecay(eta, decay=False), 1e-6, np.random.default_rng(1))
    theta = np.arctan2(result.x[1], result.x[0])
    assert abs(theta - 1.0) <= eta + 1e-9


def test_multi_comparison_variant_uses_m_comparisons_per_step():
    rng = np.random.default_rng(4)
    S = spd_samples(3, 6, rng)
    cost = KarcherCost(S)
    X_ref, _, _ = karcher_mean(S)
    oracle = ComparisonOracle(cost, rng=rng)
    result = rdngd(SPDGeometry(3), oracle, np.eye(3), 600, SqrtDecay(0.14, 20), 0.02, rng, directions=10)
    assert result.iterations == 60 and result.queries == 600
    assert cost(result.x) < cost(np.eye(3)) and np.linalg.eigvalsh(result.x)[0] > 0


def test_rdfw_is_projection_free_feasible_and_converges():
    simplex = SimplexGeometry(16)
    c = np.arange(1, 17) / 136
    cost = SquaredDistance(c)
    x0 = np.eye(16)[3]
    tracker = Tracker({"f": cost, "sum_error": lambda x: abs(x.sum() - 1), "min_x": lambda x: x.min()})
    result = rdfw(simplex, ComparisonOracle(cost, rng=np.random.default_rng(0)), x0, 20, np.random.default_rng(1),
                  record=tracker)
    rows = tracker.arrays()
    assert result.extra == {"lmo_calls": 20, "projections": 0}
    assert rows["sum_error"].max() < 1e-12 and rows["min_x"].min() >= -1e-15
    assert rows["f"][-1] < 0.05 * rows["f"][0]


def test_rzo_uses_values_within_budget_and_rgd_reaches_the_minimum():
    rng = np.random.default_rng(5)
    A = rayleigh_matrix(10, rng)
    cost, sphere = Rayleigh(A), SphereGeometry(10)
    x0 = sphere.manifold.random_point()
    values = ValueOracle(cost)
    result = rzo(sphere, values, x0, 1100, 0.5, 1e-4, 10, rng)
    assert values.evaluations == result.queries == 1100 and cost(result.x) < cost(x0)
    reference = rgd(sphere, cost, cost.euclidean_gradient, x0, 200)
    assert abs(cost(reference.x) - cost.minimum) < 1e-8
