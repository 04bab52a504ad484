"""SPS_safe and the Polyak baselines (spec §10): the rules' regimes, the safeguard, closed forms, IMA
identities and the LP optimum (the paper's numpy sweep and its cross-checks are the paper's own tests)."""
from __future__ import annotations

from functools import cache

import numpy as np
import pytest
import torch

from tasks.core.device import single_torch_thread
from tasks.optim.polyak import IMASPSSafe, SPSMax, SPSSafe, safeguard_active, sps_max_step, sps_safe_step
from tasks.train.synthetic import hinge_losses, svm_interpolated, svm_noisy


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    single_torch_thread()


@cache
def interpolated(seed: int = 0) -> dict:
    return svm_interpolated(seed)


@cache
def noisy(seed: int = 0) -> dict:
    return svm_noisy(seed)


# ---------------------------------------------------------------- the rules

def test_polyak_step_above_the_safeguard_and_subgradient_step_below_it():
    rng = np.random.default_rng(0)
    loss, grad_norm_sq, M = rng.uniform(0, 5, 500), 10 ** rng.uniform(-6, 3, 500), 10 ** rng.uniform(-3, 2, 500)
    step = sps_safe_step(loss, grad_norm_sq, M)
    polyak = grad_norm_sq >= M
    assert polyak.any() and (~polyak).any()
    np.testing.assert_allclose(step[polyak], loss[polyak] / grad_norm_sq[polyak], rtol=1e-15)
    np.testing.assert_allclose(step[~polyak], loss[~polyak] / M[~polyak], rtol=1e-15)
    assert np.all(step * np.sqrt(grad_norm_sq) <= loss / np.sqrt(M) * (1 + 1e-12))  # update norm
    assert np.array_equal(safeguard_active(grad_norm_sq, M), ~polyak)


def test_zero_gradient_is_safe_and_moves_nothing():
    a = torch.tensor([0.3, -1.2], dtype=torch.float64)
    for make in (lambda p: SPSSafe(p, M=0.5), lambda p: IMASPSSafe(p, M=0.5, lam=9), lambda p: SPSMax(p)):
        x = a.clone().requires_grad_(True)  # f(x) = ||x - a||^2 + 1: g = 0 at x = a, f = 1 > l* = 0
        opt = make([x])

        def closure(x=x, opt=opt):
            opt.zero_grad()
            loss = ((x - a) ** 2).sum() + 1
            loss.backward()
            return loss

        opt.step(closure)  # IMA's average (9 x + z) / 10 with z = x may round in the last bit
        torch.testing.assert_close(x.detach(), a, rtol=0, atol=0 if not isinstance(opt, IMASPSSafe) else 1e-15)
        assert np.isfinite(opt.stats["step_size"])
        assert opt.stats["grad_norm_sq"] == 0 and not opt.stats["safeguard_active"]
    assert sps_safe_step(1.0, 0.0, 0.5) == 2.0


@pytest.mark.parametrize("M, fraction", [(0.25, 1.0), (1.0, 1.0), (4.0, 0.25)])
def test_one_step_on_a_distance_lands_on_a_or_a_quarter_of_the_way(M, fraction):
    a = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)
    x0 = torch.tensor([3.0, 1.0, -1.5], dtype=torch.float64)
    x = x0.clone().requires_grad_(True)  # f(x) = ||x - a||: ||g|| = 1, l* = 0
    opt = SPSSafe([x], M=M)

    def closure():
        opt.zero_grad()
        loss = (x - a).norm()
        loss.backward()
        return loss

    opt.step(closure)
    torch.testing.assert_close(x.detach(), x0 + fraction * (a - x0), rtol=0, atol=1e-12)
    assert opt.stats["step_size"] == pytest.approx((x0 - a).norm().item() * fraction, rel=1e-12)


def test_step_length_is_non_increasing_in_M():
    rng = np.random.default_rng(1)
    Ms = np.logspace(-4, 4, 41)
    for loss, grad_norm_sq in zip(rng.uniform(0, 3, 50), 10 ** rng.uniform(-5, 3, 50)):
        lengths = sps_safe_step(loss, grad_norm_sq, Ms) * np.sqrt(grad_norm_sq)
        assert np.all(np.diff(lengths) <= 0)


def test_sps_max_caps_the_polyak_step():
    assert sps_max_step(2.0, 4.0, 1.0, 10.0) == pytest.approx(0.5)
    assert sps_max_step(2.0, 4.0, 0.5, 10.0) == pytest.approx(1.0)
    assert sps_max_step(2.0, 1e-8, 1.0, 10.0) == 10.0


# ---------------------------------------------------------------- IMA


def test_ima_auto_init_takes_the_first_gradient_norm_and_weight_decay_shrinks_z():
    x = torch.tensor([2.0, -1.0], dtype=torch.float64, requires_grad=True)
    opt = IMASPSSafe([x], M=0, lam=9, weight_decay=0.1)

    def closure():
        opt.zero_grad()
        loss = (x * torch.tensor([3.0, 4.0], dtype=torch.float64)).abs().sum()
        loss.backward()
        return loss

    opt.step(closure)
    assert opt.state["ima"]["M"] == 25.0 and opt.stats["step_size"] == pytest.approx(10.0 / 25.0)
    z = opt.state[x]["z"]
    expected_z = torch.tensor([2.0, -1.0], dtype=torch.float64) * (1 - 0.1 * 0.4) - 0.4 * torch.tensor([3.0, -4.0], dtype=torch.float64)
    torch.testing.assert_close(z, expected_z)
    torch.testing.assert_close(x.detach(), (9 * torch.tensor([2.0, -1.0], dtype=torch.float64) + expected_z) / 10)


def test_ima_state_dict_round_trip_continues_the_same_trajectory(tmp_path):
    """The step counter (lam_t = t) and the auto-initialised M travel with the state_dict."""
    target = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)

    def run(x, opt, steps):
        def closure():
            opt.zero_grad()
            loss = (x - target).abs().sum()
            loss.backward()
            return loss
        for _ in range(steps):
            opt.step(closure)

    x = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    straight = IMASPSSafe([x], M=0, lam="t")
    run(x, straight, 6)

    y = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    first = IMASPSSafe([y], M=0, lam="t")
    run(y, first, 3)
    torch.save(first.state_dict(), tmp_path / "opt.pt")
    resumed = IMASPSSafe([y], M=0, lam="t")
    resumed.load_state_dict(torch.load(tmp_path / "opt.pt"))
    run(y, resumed, 3)
    assert resumed.state["ima"]["t"] == 6
    torch.testing.assert_close(y.detach(), x.detach(), rtol=0, atol=0)


def test_weight_decay_is_decoupled_and_scaled_by_the_step():
    x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    opt = SPSSafe([x], M=100.0, weight_decay=0.5)

    def closure():
        opt.zero_grad()
        loss = x.sum() + 10
        loss.backward()
        return loss

    opt.step(closure)
    gamma = 13.0 / 100.0
    torch.testing.assert_close(x.detach(), torch.tensor([1.0, 2.0], dtype=torch.float64) * (1 - 0.5 * gamma) - gamma)


# ---------------------------------------------------------------- problems and sweeps

def test_lp_optimum_interpolated_is_zero_with_a_zero_loss_point_and_noisy_is_positive():
    p1, p2 = interpolated(), noisy()
    assert p1["lp_status"] == 0 and abs(p1["f_star"]) < 1e-9
    assert hinge_losses(p1["A"], p1["b"], p1["x_star"]).max() < 1e-9
    assert 0.2 < p2["f_star"] < 0.5
    assert hinge_losses(p2["A"], p2["b"], p2["x_star"]).mean() == pytest.approx(p2["f_star"], abs=1e-7)


