"""Spec §10.1-2: every weighted encoder is a permutation-invariant function of the point measure."""
from __future__ import annotations

import pytest
import torch

from tasks.sets.weighted_encoders import POOLINGS, EncoderConfig, WeightedSetClassifier


def model_for(pooling: str) -> WeightedSetClassifier:
    torch.manual_seed(0)
    return WeightedSetClassifier(EncoderConfig(pooling=pooling, dim=3, classes=4, hidden=16)).double().eval()


def random_weights(B: int, n: int) -> torch.Tensor:
    a = torch.rand(B, n, dtype=torch.float64) + 0.1
    return a / a.sum(dim=1, keepdim=True)


@pytest.mark.parametrize("pooling", POOLINGS)
def test_permutation_invariance(pooling):
    model, X, a = model_for(pooling), torch.randn(2, 9, 3, dtype=torch.float64), random_weights(2, 9)
    order = torch.randperm(9)
    assert torch.allclose(model(X[:, order], a[:, order]), model(X, a), atol=1e-6)


@pytest.mark.parametrize("pooling", POOLINGS)
def test_duplicate_with_half_weight_changes_nothing(pooling):
    model, X, a = model_for(pooling), torch.randn(2, 6, 3, dtype=torch.float64), random_weights(2, 6)
    doubled_X = torch.cat([X, X[:, :1]], dim=1)
    doubled_a = torch.cat([a, a[:, :1] / 2], dim=1)
    doubled_a[:, 0] /= 2
    assert torch.allclose(model(doubled_X, doubled_a), model(X, a), atol=1e-6)


@pytest.mark.parametrize("pooling", POOLINGS)
def test_zero_weight_is_removal_and_uniform_is_unweighted(pooling):
    model, X = model_for(pooling), torch.randn(2, 7, 3, dtype=torch.float64)
    a = random_weights(2, 5)
    padded = torch.cat([a, torch.zeros(2, 2, dtype=torch.float64)], dim=1)
    X_far = X.clone()
    X_far[:, 5:] = 50.0  # absent elements must not matter, however extreme
    assert torch.allclose(model(X_far, padded), model(X[:, :5], a), atol=1e-6)
    assert torch.allclose(model(X), model(X, torch.full((2, 7), 1 / 7, dtype=torch.float64)), atol=1e-12)


@pytest.mark.parametrize("pooling", POOLINGS)
def test_weight_gradient_is_finite_at_zero_weight(pooling):
    model, X = model_for(pooling), torch.randn(1, 5, 3, dtype=torch.float64)
    a = torch.tensor([[0.5, 0.5, 0.0, 0.0, 0.0]], dtype=torch.float64, requires_grad=True)
    model(X, a).sum().backward()
    assert torch.isfinite(a.grad).all()


def test_any_set_size_is_accepted():
    model = model_for("attention")
    for n in (1, 3, 40):
        assert model(torch.randn(2, n, 3, dtype=torch.float64)).shape == (2, 4)


def test_config_is_checked():
    with pytest.raises(ValueError, match="pooling"):
        EncoderConfig(pooling="max", dim=3, classes=2)
