"""The test objectives: known minima, gradients, the Karcher fixed point, the active-subspace invariance."""
from __future__ import annotations

import numpy as np

from tasks.comparison.objectives import (ActiveSubspace, KarcherCost, Rayleigh, karcher_mean, orthonormal_columns,
                                         rayleigh_matrix, spd_samples)


def test_rayleigh_minimum_and_gap():
    A = rayleigh_matrix(20, np.random.default_rng(0))
    lam = np.linalg.eigvalsh(A)
    assert np.isclose(lam[-1], 1.0) and np.isclose(lam[-2], 0.9)
    v = np.linalg.eigh(A)[1][:, -1]
    assert np.isclose(Rayleigh(A)(v), Rayleigh(A).minimum) and np.isclose(Rayleigh(A).minimum, -0.5)


def test_karcher_fixed_point_and_the_commuting_closed_form():
    S = spd_samples(4, 12, np.random.default_rng(1))
    X, residual, _ = karcher_mean(S)
    _, inv_half, mean_log = KarcherCost(S).whitened_logs(X)
    assert residual < 1e-12 and np.abs(mean_log).max() < 1e-12
    D = np.array([np.diag(d) for d in np.random.default_rng(2).uniform(0.5, 2.0, (7, 3))])
    X, _, _ = karcher_mean(D)
    assert np.allclose(X, np.diag(np.exp(np.log(np.diagonal(D, axis1=1, axis2=2)).mean(0))), atol=1e-10)


def test_karcher_euclidean_gradient_matches_finite_differences():
    S = spd_samples(3, 5, np.random.default_rng(3))
    cost, X = KarcherCost(S), np.diag([1.0, 1.5, 0.7])
    E = np.random.default_rng(4).standard_normal((3, 3))
    E = E + E.T
    h = 1e-6
    numeric = (cost(X + h * E) - cost(X - h * E)) / (2 * h)
    assert np.isclose(numeric, np.sum(cost.euclidean_gradient(X) * E), rtol=1e-5)


def test_active_subspace_invariance_and_batched_instances():
    rng = np.random.default_rng(5)
    A = orthonormal_columns(30, 3, rng)
    f, x, z = ActiveSubspace(A), rng.standard_normal(30), rng.standard_normal(30)
    assert abs(f(x + z - A @ (A.T @ z)) - f(x)) < 1e-12
    stacked = np.stack([A, orthonormal_columns(30, 3, rng)])
    xs = rng.standard_normal((2, 30))
    assert np.allclose(ActiveSubspace(stacked)(xs), [ActiveSubspace(a)(v) for a, v in zip(stacked, xs)])
    g = A @ (A.T @ x - np.sin(3 * (A.T @ x)))
    assert np.isclose(f.grad_norm(x), np.linalg.norm(g))
