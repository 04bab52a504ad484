"""W2 barycenters (spec §10.1-2): POT's free-support barycenter against the closed form for Gaussians, and its
invariants."""
from __future__ import annotations

import numpy as np
import pytest

from tasks.federated.wasserstein import (diagonal_gaussian_barycenter, diagonal_gaussian_w2_squared,
                                         free_support_barycenter)


def test_gaussian_barycenter_averages_stds_not_variances():
    """1-D N(m_k, s_k^2), weights pi: the free-support barycenter of large samples has mean sum pi m_k and std
    sum pi s_k (3 %), far from sqrt(sum pi s_k^2). Quantile samples (1000 points each, uniform masses, a
    1000-point support) keep the LP small and the sampling error tiny."""
    from scipy.stats import norm

    n = 1000
    grid = norm.ppf((np.arange(n) + 0.5) / n)
    means, stds, pi = np.array([-1.0, 3.0]), np.array([0.1, 2.0]), np.array([0.3, 0.7])
    measures = [(m + s * grid)[:, None] for m, s in zip(means, stds)]
    bary = free_support_barycenter(measures, [np.full(n, 1 / n)] * 2, pi, n, np.random.default_rng(0))
    mean, std = diagonal_gaussian_barycenter(means[:, None], stds[:, None], pi)
    assert bary.mean() == pytest.approx(mean[0], rel=0.03, abs=0.03)
    assert bary.std() == pytest.approx(std[0], rel=0.03)
    assert abs(bary.std() - np.sqrt(pi @ stds**2)) > 0.1  # moment matching of variances is a different answer


def test_translation_and_mean():
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(3, 2)), rng.normal(size=(3, 2)) + 2
    mass_a, mass_b, pi = np.full(3, 1 / 3), np.full(3, 1 / 3), np.array([0.25, 0.75])
    bary = free_support_barycenter([a, b], [mass_a, mass_b], pi, 3, np.random.default_rng(0))
    shift = np.array([5.0, -2.0])
    moved = free_support_barycenter([a + shift, b + shift], [mass_a, mass_b], pi, 3, np.random.default_rng(0))
    assert np.allclose(moved, bary + shift, atol=1e-6)
    # uniform barycenter mass: its mean is the weighted mean of the input means
    assert np.allclose(bary.mean(0), pi[0] * a.mean(0) + pi[1] * b.mean(0), atol=1e-6)


def test_identical_uniform_measures_are_their_own_barycenter():
    points = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]])
    uniform = np.full(3, 1 / 3)
    bary = free_support_barycenter([points, points, points], [uniform] * 3, np.array([0.2, 0.3, 0.5]), 3,
                                   np.random.default_rng(0))
    assert np.allclose(np.sort(bary, axis=0), np.sort(points, axis=0), atol=1e-9)


def test_w2_closed_form():
    m1, s1, m2, s2 = np.zeros(2), np.ones(2), np.array([3.0, 4.0]), np.array([2.0, 1.0])
    assert diagonal_gaussian_w2_squared(m1, s1, m2, s2) == pytest.approx(25 + 1)
