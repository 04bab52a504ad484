"""S-Adam (spec §10): the LGI estimator on closed forms, the brake, and AdamW as its lambda = 0 limit."""
from __future__ import annotations

import math

import pytest
import torch

from tasks.optim.sadam import (SAdam, damping, draw_directions, local_geometric_instability, probe_differences)

D, K, DRAWS = 1000, 8, 500


def mlp(seed: int) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(5, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3)).double()


def batches(steps: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(7)
    return [(torch.randn(8, 5, generator=g, dtype=torch.float64), torch.randint(0, 3, (8,), generator=g))
            for _ in range(steps)]


def train(model, optimizer, data) -> list[torch.Tensor]:
    for x, y in data:
        def closure(backward=True):
            if backward:
                optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x), y)
            if backward:
                loss.backward()
            return loss
        optimizer.step(closure)
    return [p.detach().clone() for p in model.parameters()]


@pytest.mark.parametrize("ablation", [{"strength": 0.0}, {"k": 1}])
def test_no_brake_and_one_probe_reproduce_adamw_exactly(ablation):
    data = batches(20)
    reference = mlp(0)
    expected = train(reference, torch.optim.AdamW(reference.parameters(), lr=1e-2, weight_decay=0.05), data)
    model = mlp(0)
    sadam = SAdam(model.parameters(), lr=1e-2, weight_decay=0.05, **ablation)
    got = train(model, sadam, data)
    assert all(torch.equal(a, b) for a, b in zip(got, expected))
    assert sadam.stats["damp"] == 1.0


def test_default_brake_slows_the_same_trajectory():
    data = batches(5)
    model = mlp(0)
    sadam = SAdam(model.parameters(), lr=1e-2)
    got = train(model, sadam, data)
    reference = mlp(0)
    expected = train(reference, torch.optim.AdamW(reference.parameters(), lr=1e-2), data)
    assert 0 < sadam.stats["damp"] < 1
    assert not all(torch.equal(a, b) for a, b in zip(got, expected))


def test_probe_loop_restores_parameters_bit_for_bit_and_runs_without_grad():
    torch.manual_seed(0)
    params = [torch.randn(37, 11), torch.randn(11)]  # float32: add-then-subtract would drift
    before = [p.clone() for p in params]
    grad_modes = []

    def forward():
        grad_modes.append(torch.is_grad_enabled())
        return torch.relu(params[0] @ params[1]).sum()

    directions = draw_directions(params, K, torch.Generator().manual_seed(1))
    probe_differences(forward, params, float(forward()), directions, sigma=0.0123)
    assert all(torch.equal(p, b) for p, b in zip(params, before))
    assert grad_modes[1:] == [False] * K


def sphere_draws(seed: int) -> torch.Tensor:
    """DRAWS x K global probe directions in R^D, shape (DRAWS, K, D)."""
    x = torch.zeros(D, dtype=torch.float64)
    (u,) = draw_directions([x], DRAWS * K, torch.Generator().manual_seed(seed), "global")
    return u.reshape(DRAWS, K, D)


def test_global_directions_are_unit_and_per_tensor_ones_unit_per_tensor():
    params = [torch.zeros(4, 5, dtype=torch.float64), torch.zeros(3, dtype=torch.float64)]
    generator = torch.Generator().manual_seed(0)
    glob = draw_directions(params, K, generator, "global")
    total = sum(u.reshape(K, -1).pow(2).sum(dim=1) for u in glob)
    assert torch.allclose(total, torch.ones(K, dtype=torch.float64))
    for u in draw_directions(params, K, generator, "per_tensor"):
        assert torch.allclose(u.reshape(K, -1).norm(dim=1), torch.ones(K, dtype=torch.float64))
    with pytest.raises(ValueError, match="probe_norm.*'sphere'"):
        draw_directions(params, K, generator, "sphere")


def test_lgi_on_closed_form_functions_matches_the_spec_ranges():
    """d = 1000, k = 8, 500 draws, global probes, sigma = 0.01; D_i in closed form, vectorised over draws."""
    g = torch.Generator().manual_seed(3)
    a = torch.randn(D, generator=g, dtype=torch.float64)
    h = torch.rand(D, generator=g, dtype=torch.float64) * 1.5 + 0.5  # curvatures in [0.5, 2]
    sigma = 0.01
    linear = local_geometric_instability(sphere_draws(0) @ a)  # (a^T(x + s u) - a^T x) / s
    kink = local_geometric_instability((sphere_draws(1) @ a).abs())  # |a^T(0 + s u)| / s at a^T x = 0
    bowl = local_geometric_instability(sigma * (sphere_draws(2) ** 2) @ h)  # sum h (s u)^2 / s at 0
    assert 0.9 <= linear.mean() <= 1.1
    assert 0.30 <= kink.mean() <= 0.43
    assert bowl.mean() < 0.02


def test_probes_of_a_real_loss_equal_the_closed_form():
    a = torch.randn(D, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    x = torch.zeros(D, dtype=torch.float64)
    directions = draw_directions([x], K, torch.Generator().manual_seed(5), "global")
    got = probe_differences(lambda: (a @ x).abs(), [x], 0.0, directions, sigma=0.01)
    assert torch.allclose(got, (directions[0] @ a).abs(), rtol=1e-12, atol=1e-12)


def test_rho_is_scale_free():
    torch.manual_seed(6)
    x = torch.randn(50, dtype=torch.float64)
    a = torch.randn(50, dtype=torch.float64)

    def loss():
        return (a @ x).abs() + 0.5 * torch.relu(x).pow(2).sum()

    directions = draw_directions([x], K, torch.Generator().manual_seed(0))
    rho = local_geometric_instability(probe_differences(loss, [x], float(loss()), directions, 0.01))
    rho10 = local_geometric_instability(probe_differences(lambda: 10 * loss(), [x], float(10 * loss()), directions, 0.01))
    assert rho10 == pytest.approx(float(rho), rel=1e-4)


def test_rho_and_damping_bounds():
    g = torch.Generator().manual_seed(8)
    samples = [torch.randn(2000, K, generator=g, dtype=torch.float64),
               torch.rand(2000, K, generator=g, dtype=torch.float64) ** 8,
               torch.randn(2000, K, generator=g, dtype=torch.float64) - 3.0]
    centred = samples[0] - samples[0].mean(dim=1, keepdim=True)  # zero mean: the upper bound k/(k-1)
    rho = torch.cat([local_geometric_instability(s) for s in (*samples, centred)])
    assert rho.min() >= 0 and rho.max() <= K / (K - 1)
    assert local_geometric_instability(centred, eps_lgi=1e-12).max() == pytest.approx(K / (K - 1))
    assert local_geometric_instability(torch.full((K,), 2.0)) == 0
    assert local_geometric_instability(torch.randn(1, 1)).item() == 0  # k = 1: no variance, no brake
    damps = [damping(float(r), 2.0) for r in rho]
    assert math.exp(-2.0 * K / (K - 1)) <= min(damps) and max(damps) <= 1
    assert damping(50.0, 1.0, rho_cap=10.0) == math.exp(-10.0)


def test_weight_decay_is_not_damped():
    """Zero gradient, locally linear probes (rho ~ 1, strong brake): p_t = p_0 (1 - lr wd)^t anyway."""
    p = torch.nn.Parameter(torch.linspace(-1, 1, 200, dtype=torch.float64))
    a = torch.randn(200, generator=torch.Generator().manual_seed(9), dtype=torch.float64)
    optimizer = SAdam([p], lr=0.1, weight_decay=0.5)

    def closure(backward=True):
        loss = (a @ p).detach() + 0 * p.sum()  # gradient exactly 0, value linear in p
        if backward:
            optimizer.zero_grad()
            loss.backward()
        return loss

    expected = p.detach().clone()
    for _ in range(10):
        optimizer.step(closure)
        expected.mul_(1 - 0.1 * 0.5)
        assert optimizer.stats["damp"] < 0.5
    assert torch.equal(p.detach(), expected)


def test_probes_leave_the_global_rng_alone_and_follow_their_own_seed():
    def run(seed):
        model = mlp(0)
        optimizer = SAdam(model.parameters(), seed=seed)
        torch.manual_seed(123)
        state = torch.get_rng_state()
        train(model, optimizer, batches(3))
        assert torch.equal(torch.get_rng_state(), state)
        return optimizer.stats["rho"]

    assert run(0) == run(0) != run(1)


def test_bad_options_name_the_field():
    p = [torch.nn.Parameter(torch.zeros(2))]
    for option, value in (("k", 0), ("sigma", 0.0), ("strength", -1.0), ("probe_norm", "sphere"), ("lr", -1e-3)):
        with pytest.raises(ValueError, match=f"SAdam {option}: invalid value"):
            SAdam(p, **{option: value})
    with pytest.raises(ValueError, match="closure"):
        SAdam(p).step(None)
