"""Signum / SoftSignum / HardSwitchSign (spec §3.3, §10)."""
from __future__ import annotations

import io

import pytest
import torch

from tasks.core.device import single_torch_thread
from tasks.optim.signum import HardSwitchSign, Signum, SoftSignum, momentum_direction, transition_map
from tasks.optim.temperature import TemperatureSchedule, tanh_c_eps

single_torch_thread()


def noisy_quadratic(optimizer, x, steps, seed=0):
    """f = 0.5 sum h x^2 with noisy gradients; returns the iterate after every step."""
    generator = torch.Generator().manual_seed(seed)
    h = torch.logspace(-2, 0, x.numel())
    trace = []
    for _ in range(steps):
        x.grad = h * x.detach() + 0.01 * torch.randn(x.shape, generator=generator)
        optimizer.step()
        trace.append(x.detach().clone())
    return trace


def start(n=50, seed=1):
    return torch.nn.Parameter(torch.randn(n, generator=torch.Generator().manual_seed(seed)))


@pytest.mark.parametrize("options", [{}, {"nesterov": True, "weight_decay": 0.1, "dampening": 0.9}])
def test_softsignum_without_transition_is_signum_and_follows_it_until_t_sign(options):
    x_sign, x_whole, x_soft, x_hard = start(), start(), start(), start()
    signum = noisy_quadratic(Signum([x_sign], lr=0.01, **options), x_sign, 40)
    whole = noisy_quadratic(SoftSignum([x_whole], lr=0.01, total_steps=40, alpha_sign=1.0, **options), x_whole, 40)
    soft_opt = SoftSignum([x_soft], lr=0.01, total_steps=40, alpha_sign=0.5, **options)
    soft = noisy_quadratic(soft_opt, x_soft, 40)
    hard = noisy_quadratic(HardSwitchSign([x_hard], lr=0.01, total_steps=40, alpha_sign=0.5, **options), x_hard, 40)
    assert all(torch.equal(a, b) for a, b in zip(signum, whole))
    assert all(torch.equal(a, b) and torch.equal(a, c) for a, b, c in zip(signum[:20], soft[:20], hard[:20]))
    assert not torch.equal(signum[20], soft[20]) and not torch.equal(signum[20], hard[20])
    assert soft_opt.stats["phase"] == "soft" and 1.0 <= soft_opt.stats["tau"] <= 20.0


def test_momentum_rule_and_tiny_tau_equal_momentum_sgd():
    """tanh(tau d) ~ tau d for tiny tau, so lr' = lr / tau recovers torch.optim.SGD with momentum."""
    x_ref, x = start(), start()
    reference = noisy_quadratic(torch.optim.SGD([x_ref], lr=0.05, momentum=0.9, dampening=0.5, nesterov=False), x_ref, 30)
    generator, h, state, tau = torch.Generator().manual_seed(0), torch.logspace(-2, 0, 50), {}, 1e-6
    for k in range(30):
        grad = h * x.detach() + 0.01 * torch.randn(x.shape, generator=generator)
        d = momentum_direction(grad, state, momentum=0.9, dampening=0.5, nesterov=False)
        with torch.no_grad():
            x.add_(transition_map(d, "soft", tau), alpha=-0.05 / tau)
        assert torch.allclose(x.detach(), reference[k], atol=1e-6)


def test_huge_tau_is_sign_and_sgd_phase_is_identity():
    d = torch.tensor([-2.0, -1e-3, 1e-3, 0.5, 0.0])
    assert torch.equal(transition_map(d, "soft", 1e6)[:4], torch.sign(d)[:4])
    assert torch.equal(transition_map(d, "sgd"), d) and torch.equal(transition_map(d, "sign"), torch.sign(d))


def test_schedule_built_once_from_momentum_at_t_sign_plus_one_and_survives_state_dict():
    x = start()
    opt = SoftSignum([x], lr=0.01, total_steps=30, alpha_sign=0.5)
    generator, h = torch.Generator().manual_seed(0), torch.logspace(-2, 0, 50)
    for k in range(1, 31):
        x.grad = h * x.detach() + 0.01 * torch.randn(x.shape, generator=generator)
        opt.step()
        schedules = opt.state["transition"]["schedules"]
        if k <= 15:
            assert not schedules and opt.stats["phase"] == "sign" and opt.stats["tau"] == float("inf")
        if k == 16:
            built = schedules[0].clone()
            expected = TemperatureSchedule.build(opt.state[x]["momentum_buffer"], 15, tanh_c_eps(1e-4), tau_max=20.0)
            assert torch.equal(built, expected.taus) and opt.stats["tau"] == 20.0
        if k > 16:
            assert torch.equal(schedules[0], built) and opt.stats["tau"] == float(built[k - 16])
        if k == 20:
            buffer = io.BytesIO()
            torch.save(opt.state_dict(), buffer)
    buffer.seek(0)
    resumed = SoftSignum([torch.nn.Parameter(torch.zeros(50))], lr=0.01, total_steps=30, alpha_sign=0.5)
    resumed.load_state_dict(torch.load(buffer))
    assert resumed.state["transition"]["step"] == 20 and torch.equal(resumed.state["transition"]["schedules"][0], built)


def test_weight_decay_is_decoupled_and_step_scales():
    x = torch.nn.Parameter(torch.tensor([2.0, -4.0]))
    x.grad = torch.tensor([3.0, 0.0])
    Signum([x], lr=0.1, weight_decay=0.5).step()
    assert torch.allclose(x.detach(), torch.tensor([2.0 * 0.95 - 0.1, -4.0 * 0.95]))
    y = torch.nn.Parameter(torch.zeros(2))
    y.grad = torch.tensor([3.0, -4.0])
    Signum([y], lr=0.1, normalized=True).step()
    assert torch.allclose(y.detach(), torch.tensor([-0.02, 0.02]))
    z = torch.nn.Parameter(torch.zeros(2))
    z.grad = torch.tensor([3.0, -4.0])
    Signum([z], lr=0.1, sign_norm=True).step()
    assert torch.allclose(z.detach(), torch.tensor([-0.5, 0.5]))


def test_closure_and_stats_and_bad_options():
    x = start(4)
    opt = Signum([x], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (x ** 2).sum()
        loss.backward()
        return loss

    assert opt.step(closure).item() > 0 and opt.stats["saturated_fraction"] == 1.0
    with pytest.raises(ValueError, match="total_steps"):
        SoftSignum([x], lr=0.1, total_steps=None)
    with pytest.raises(ValueError, match="sign_norm"):
        Signum([x], normalized=True, sign_norm=True)
    with pytest.raises(ValueError, match="momentum"):
        Signum([x], momentum=1.0)
