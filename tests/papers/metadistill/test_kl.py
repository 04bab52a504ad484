"""The distillation loss (spec §10): KL in closed form, the normalisation, the soft clip, the alignment index."""
from __future__ import annotations

import pytest
import torch
from torch.distributions import MultivariateNormal, kl_divergence

from flows.metadistill.kl import align_index, gaussian_kl, kl_norm, maxabs_normalise, soft_clip


def spd(d, seed, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    A = torch.randn(d, d, generator=g, dtype=torch.float64)
    return scale * (A @ A.T + 0.1 * torch.eye(d, dtype=torch.float64))


def mean(d, seed, scale=1.0):
    return scale * torch.randn(d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def test_kl_of_a_distribution_with_itself_is_zero():
    assert abs(float(gaussian_kl(mean(4, 0), spd(4, 0), mean(4, 0), spd(4, 0)))) < 1e-12
    assert float(kl_norm(mean(4, 0), spd(4, 0), mean(4, 0), spd(4, 0))) == pytest.approx(0, abs=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_closed_form_matches_torch_and_is_nonnegative(seed):
    mp, Sp, mq, Sq = mean(5, seed), spd(5, seed), mean(5, seed + 10), spd(5, seed + 10)
    ours = float(gaussian_kl(mp, Sp, mq, Sq))
    reference = float(kl_divergence(MultivariateNormal(mp, Sp), MultivariateNormal(mq, Sq)))
    assert ours >= 0 and ours == pytest.approx(reference, abs=1e-8)


def test_soft_clip_is_continuous_and_increasing():
    x = torch.linspace(0, 100, 10001, dtype=torch.float64)
    y = soft_clip(x)
    assert torch.all(torch.diff(y) > 0)
    assert float(soft_clip(torch.tensor(10.0 + 1e-9, dtype=torch.float64))) == pytest.approx(10.0, abs=1e-7)
    assert torch.equal(y[x <= 10], x[x <= 10])


@pytest.mark.parametrize("c", [1.0, 3.0, 250.0])
def test_maxabs_normalisation_is_invariant_to_a_common_rescaling(c):
    """Means scaled by c and covariances by c^2 (x -> c x), from distributions already past the floor of 1."""
    mp, Sp, mq, Sq = mean(3, 1, 4.0), spd(3, 1, 5.0), mean(3, 2, 4.0), spd(3, 2, 5.0)
    base = maxabs_normalise(mp, Sp, mq, Sq)
    scaled = maxabs_normalise(c * mp, c ** 2 * Sp, c * mq, c ** 2 * Sq)
    assert all(torch.allclose(a, b) for a, b in zip(base, scaled))
    assert float(kl_norm(mp, Sp, mq, Sq)) == pytest.approx(float(kl_norm(c * mp, c ** 2 * Sp, c * mq, c ** 2 * Sq)))


def test_singular_covariances_are_clamped_not_fatal():
    singular = torch.zeros(3, 3, dtype=torch.float64)
    assert torch.isfinite(kl_norm(mean(3, 0), singular, mean(3, 1), singular))


def test_alignment_index():
    assert [align_index(g, 10, 100) for g in range(10)] == [9] * 10
    assert align_index(10, 10, 100) == 19 and align_index(99, 10, 100) == 99
    assert align_index(45, 10, 50) == 49 and align_index(44, 10, 47) == 46
