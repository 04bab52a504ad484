"""Spec sw_drso §10.3, 10.5, 10.6: the barycentric adversary's feasibility, reductions and ascent."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from flows.sw_drso.adversary import clean_weights, deletion_cap, diagnostics, inner_max
from flows.sw_drso.training import METHODS, TrainConfig, outlier_pool, train_classifier
from tasks.sets.capped_simplex import total_variation
from tasks.sets.primitive_clouds import CLASSES, primitive_clouds
from tasks.sets.sliced_wasserstein import random_directions
from tasks.sets.weighted_encoders import EncoderConfig, WeightedSetClassifier

N, M = 16, 4


@pytest.fixture(scope="module")
def data():
    return primitive_clouds(CLASSES[:5], 12, N, seed=3)


@pytest.fixture(scope="module")
def trained(data):
    X, y = data
    encoder = EncoderConfig(pooling="attention", dim=3, classes=5, hidden=16)
    return train_classifier(X, y, encoder, TrainConfig(method="erm", epochs=15, lr=5e-3), 0).model


def support(data, generator_seed: int = 0):
    X, y = data
    X = torch.from_numpy(X)
    g = torch.Generator().manual_seed(generator_seed)
    return torch.cat([X, outlier_pool(X, M, "ball", g)], dim=1), torch.from_numpy(y), g


@pytest.mark.parametrize("pooling", ["attention", "mean", "lse"])
def test_every_ascent_step_is_feasible(data, pooling):
    torch.manual_seed(0)
    model = WeightedSetClassifier(EncoderConfig(pooling=pooling, dim=3, classes=5, hidden=16))
    Z, y, g = support(data)
    eps, rho = 0.3 * torch.rand(len(y), generator=g), 0.5 * torch.rand(len(y), generator=g)
    a0 = clean_weights(len(y), N, M, Z)
    for steps in range(4):  # each run starts from uniform, so steps = k is the state after k ascent steps
        adversary = inner_max(model, Z, N, y, eps, rho, steps=steps, alpha=2.0)
        a_in, a_out = adversary.a_in, adversary.a_out
        assert (a_in >= 0).all() and torch.allclose(a_in.sum(1), torch.ones(len(y)), atol=1e-6)
        assert (a_in <= deletion_cap(N, rho)[:, None] + 1e-6).all()
        assert (a_out >= 0).all() and torch.allclose(a_out.sum(1), torch.ones(len(y)), atol=1e-6)
        assert (total_variation(adversary.a, a0) <= torch.maximum(eps, rho) + 1e-6).all()


def test_no_budget_leaves_the_clean_set(data, trained):
    Z, y, _ = support(data)
    zero = torch.zeros(len(y))
    adversary = inner_max(trained, Z, N, y, zero, zero, steps=5, alpha=2.0)
    assert torch.allclose(adversary.a, clean_weights(len(y), N, M, Z), atol=1e-7)
    assert torch.allclose(trained(Z, adversary.a), trained(Z[:, :N]), atol=1e-5)


def test_ascent_increases_the_loss(data, trained):
    Z, y, g = support(data)
    eps, rho = 0.3 * torch.rand(len(y), generator=g), 0.5 * torch.rand(len(y), generator=g)
    uniform = inner_max(trained, Z, N, y, eps, rho, steps=0, alpha=2.0)
    attacked = inner_max(trained, Z, N, y, eps, rho, steps=3, alpha=2.0)
    with torch.no_grad():
        before = F.cross_entropy(trained(Z, uniform.a), y, reduction="none")
        after = F.cross_entropy(trained(Z, attacked.a), y, reduction="none")
    assert float((after - before).mean()) > 0
    assert float(torch.median(after - before)) > 0
    numbers = diagnostics(attacked, N)
    assert numbers["deleted_fraction"] > 0 and 0 < numbers["tv"] <= 0.5


def test_sw_penalty_keeps_the_weights_feasible(data, trained):
    Z, y, g = support(data)
    eps, rho = torch.full((len(y),), 0.2), torch.full((len(y),), 0.4)
    adversary = inner_max(trained, Z, N, y, eps, rho, steps=2, alpha=2.0, sw_gamma=1.0,
                          directions=random_directions(3, 10, g))
    assert torch.allclose(adversary.a.sum(1), torch.ones(len(y)), atol=1e-6)


def state(model) -> dict:
    return {k: v.clone() for k, v in model.state_dict().items()}


def test_sw_drso_without_budget_is_erm(data):
    X, y = data
    encoder = EncoderConfig(pooling="attention", dim=3, classes=5, hidden=16)
    erm = train_classifier(X, y, encoder, TrainConfig(method="erm", epochs=2), 0).model
    robust = train_classifier(X, y, encoder, TrainConfig(method="sw_drso", epochs=2, eps_max=0.0, rho_max=0.0), 0).model
    for key, value in state(erm).items():
        assert torch.allclose(value, robust.state_dict()[key], atol=1e-5), key


def test_zero_ascent_steps_is_random_weights(data):
    X, y = data
    encoder = EncoderConfig(pooling="mean", dim=3, classes=5, hidden=16)
    baseline = train_classifier(X, y, encoder, TrainConfig(method="random_weights", epochs=2), 0).model
    zero_steps = train_classifier(X, y, encoder, TrainConfig(method="sw_drso", epochs=2, ascent_steps=0), 0).model
    for key, value in state(baseline).items():
        assert torch.equal(value, zero_steps.state_dict()[key]), key


@pytest.mark.parametrize("method", METHODS)
def test_training_is_deterministic(data, method):
    X, y = data
    encoder = EncoderConfig(pooling="attention", dim=3, classes=5, hidden=16)
    one = train_classifier(X, y, encoder, TrainConfig(method=method, epochs=1), 7)
    two = train_classifier(X, y, encoder, TrainConfig(method=method, epochs=1), 7)
    assert one.log == two.log
    for key, value in state(one.model).items():
        assert torch.equal(value, two.model.state_dict()[key]), key
    assert np.isfinite(one.log[-1]["clean_loss"])
