"""Prox-SGD (spec §4, §10): heavy-ball SGD plus the l1 proximal map."""
from __future__ import annotations

import pytest
import torch

from tasks.optim.prox_sgd import ProxSGD, soft_threshold


def trajectory(make_optimizer, steps=20) -> list[torch.Tensor]:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1)).double()
    optimizer = make_optimizer(model.parameters())
    g = torch.Generator().manual_seed(1)
    for _ in range(steps):
        x, y = torch.randn(6, 4, generator=g, dtype=torch.float64), torch.randn(6, 1, generator=g, dtype=torch.float64)

        def closure(backward=True):
            optimizer.zero_grad()
            loss = (model(x) - y).pow(2).mean()
            loss.backward()
            return loss
        optimizer.step(closure)
    return [p.detach().clone() for p in model.parameters()]


def test_without_l1_it_is_torch_sgd_with_heavy_ball_momentum():
    ours = trajectory(lambda p: ProxSGD(p, lr=0.05, momentum=0.9, l1=0.0))
    torch_sgd = trajectory(lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, dampening=0))
    assert all(torch.equal(a, b) for a, b in zip(ours, torch_sgd))


def test_l1_shrinks_every_step_and_zeroes_small_weights():
    plain = trajectory(lambda p: ProxSGD(p, lr=0.05, l1=0.0), steps=1)
    sparse = trajectory(lambda p: ProxSGD(p, lr=0.05, l1=2.0), steps=1)  # threshold lr * l1 = 0.1
    for a, b in zip(plain, sparse):
        assert torch.equal(b, soft_threshold(a, 0.1))
        assert torch.all(b[a.abs() <= 0.1] == 0)


def test_soft_threshold():
    x = torch.tensor([-2.0, -0.5, -0.1, 0.0, 0.05, 0.1, 0.3])
    shrunk = soft_threshold(x, 0.1)
    assert torch.allclose(shrunk, torch.tensor([-1.9, -0.4, 0.0, 0.0, 0.0, 0.0, 0.2]), rtol=0, atol=1e-7)
    assert torch.all(shrunk[x.abs() <= 0.1] == 0)


def test_bad_options_name_the_field():
    p = [torch.nn.Parameter(torch.zeros(2))]
    for option, value in (("lr", 0.0), ("momentum", 1.0), ("l1", -1e-4)):
        with pytest.raises(ValueError, match=f"ProxSGD {option}: invalid value"):
            ProxSGD(p, **{option: value})
