"""PVDA (spec §10.3) and HWA's per-class statistics (§3.2, §10.2)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from flows.fedcdwa.hwa import aggregate, inter_class_ratio
from flows.fedcdwa.losses import STD_EPS, pvda
from tasks.federated.wasserstein import diagonal_gaussian_w2_squared


def batch(seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(12, 4, generator=g, dtype=torch.float64), torch.tensor([0] * 6 + [1] * 6)


def test_pvda_zero_when_batch_matches_global():
    z, y = batch()
    mu = torch.stack([z[y == c].mean(0) for c in (0, 1)])
    sigma = torch.stack([torch.sqrt(z[y == c].var(0, unbiased=False) + STD_EPS) for c in (0, 1)])
    assert float(pvda(z, y, mu, sigma, torch.tensor([True, True]), 0.1, 0.1)) == pytest.approx(0.0, abs=1e-12)


def test_pvda_gradient_finite_for_collapsed_class():
    z = torch.ones(6, 3, requires_grad=True)  # identical features: variance 0
    y = torch.zeros(6, dtype=torch.long)
    loss = pvda(z, y, torch.zeros(1, 3), torch.ones(1, 3), torch.tensor([True]), 0.1, 0.1)
    loss.backward()
    assert torch.isfinite(z.grad).all() and torch.isfinite(loss)


def test_pvda_is_w2_squared_of_diagonal_gaussians():
    z, y = batch(1)
    mu, sigma = torch.randn(2, 4, dtype=torch.float64), torch.rand(2, 4, dtype=torch.float64) + 0.5
    expected = np.mean([diagonal_gaussian_w2_squared(z[y == c].mean(0).numpy(),
                                                     np.sqrt(z[y == c].var(0, unbiased=False).numpy() + STD_EPS),
                                                     mu[c].numpy(), sigma[c].numpy()) for c in (0, 1)])
    assert float(pvda(z, y, mu, sigma, torch.tensor([True, True]), 1.0, 1.0)) == pytest.approx(expected, rel=1e-10)
    # classes without global statistics are left out
    only = float(pvda(z, y, mu, sigma, torch.tensor([True, False]), 1.0, 1.0))
    assert only == pytest.approx(diagonal_gaussian_w2_squared(
        z[y == 0].mean(0).numpy(), np.sqrt(z[y == 0].var(0, unbiased=False).numpy() + STD_EPS), mu[0].numpy(),
        sigma[0].numpy()), rel=1e-10)


def test_hwa_statistics():
    rng = np.random.default_rng(0)
    K, C, J, D = 3, 2, 3, 4
    counts = np.array([[5, 0], [10, 2], [0, 0]])
    protos, stds = rng.normal(size=(K, C, D)), rng.random((K, C, D)) + 0.1
    sub, mass = rng.normal(size=(K, C, J, D)), np.full((K, C, J), 1 / 3)
    stats = aggregate(counts, protos, stds, sub, mass, 3, np.random.default_rng(0))
    pi = np.array([5, 10]) / 15
    assert np.allclose(stats.mu[0], pi @ protos[:2, 0]) and np.allclose(stats.sigma[0], pi @ stds[:2, 0])
    assert np.allclose(stats.mu[1], protos[1, 1]) and stats.known.tolist() == [True, True]
    # uniform-mass support: its mean is the pi-weighted mean of the clients' sub-prototype means
    assert np.allclose(stats.support[0].mean(0), pi @ sub[:2, 0].mean(1), atol=1e-6)
    gauss = aggregate(counts, protos, stds, sub, mass, 1, np.random.default_rng(0))
    assert np.allclose(gauss.support[:, 0], gauss.mu) and gauss.support_n.tolist() == [1, 1]
    assert np.isfinite(inter_class_ratio(stats))
