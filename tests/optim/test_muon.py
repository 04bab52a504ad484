"""Muon, its aux AdamW and SoftMuon's Phi_tau."""
from __future__ import annotations

import io
import math

import pytest
import torch

from tasks.core.device import single_torch_thread
from tasks.optim.adamw_rule import adamw_update
from tasks.optim.muon import (Muon, SoftMuon, as_matrix, muon_param_groups, muon_scale, newton_schulz5, orthogonalize,
                              polar_factor, soft_polar_exact, soft_polar_iterative)
from tasks.optim.temperature import TemperatureSchedule, algebraic_c_eps

single_torch_thread()


def gaussian(rows, cols, seed=0, dtype=torch.float32):
    return torch.randn(rows, cols, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def cubic_steps(optimizer, params, targets):
    """Steps on sum((p - t)^3) so gradients change with the parameters (a quadratic would hide momentum bugs)."""
    for target in targets:
        optimizer.zero_grad()
        sum(((p - t) ** 3).sum() for p, t in zip(params, target)).backward()
        optimizer.step()
    return [p.detach().clone() for p in params]


def test_ns5_singular_values_and_alignment_with_polar_factor():
    X = gaussian(64, 32)
    O = newton_schulz5(X)
    s = torch.linalg.svdvals(O)
    assert 0.6 <= s.min() and s.max() <= 1.3
    P = polar_factor(X)
    assert float((O * P).sum() / (O.norm() * P.norm())) > 0.95
    assert torch.allclose(P.T @ P, torch.eye(32), atol=1e-5)
    assert torch.allclose(newton_schulz5(X.T), O.T, atol=1e-6)  # tall and wide agree
    assert orthogonalize(X, "svd").shape == orthogonalize(X, "ns5").shape == X.shape
    with pytest.raises(ValueError, match="orthogonalizer"):
        orthogonalize(X, "qr")


def test_shape_helpers():
    assert muon_scale((64, 32)) == math.sqrt(2) and muon_scale((32, 64)) == 1.0
    assert muon_scale((8, 2, 3, 3)) == 1.0 and as_matrix(torch.zeros(8, 2, 3, 3)).shape == (8, 18)
    with pytest.raises(ValueError, match="shape"):
        as_matrix(torch.zeros(5))


@pytest.mark.parametrize("form", ["ema", "sum"])
def test_muon_matches_torch_muon_over_five_steps(form):
    W0 = [gaussian(16, 8, 1), gaussian(8, 24, 2)]
    targets = [[gaussian(*w.shape, 10 + 2 * k + i) for i, w in enumerate(W0)] for k in range(5)]
    options = dict(lr=0.02, weight_decay=0.1, momentum=0.95, nesterov=True)
    ours = [torch.nn.Parameter(w.clone()) for w in W0]
    theirs = [torch.nn.Parameter(w.clone()) for w in W0]
    mine = cubic_steps(Muon(ours, momentum_form=form, orthogonalizer="ns5", **options), ours, targets)
    ref = cubic_steps(torch.optim.Muon(theirs, **options), theirs, targets)
    for a, b, w in zip(mine, ref, W0):
        assert (a - w).norm() > 0.1  # they moved
        assert float((a - b).norm() / b.norm()) < 1e-3


def test_adamw_rule_equals_torch_adamw():
    p0 = gaussian(7, 5, 3)
    targets = [[gaussian(7, 5, 20 + k)] for k in range(6)]
    options = dict(lr=1e-2, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)
    ref_param = torch.nn.Parameter(p0.clone())
    ref = cubic_steps(torch.optim.AdamW([ref_param], **options), [ref_param], targets)[0]
    p, state = p0.clone(), {}
    for (target,) in targets:
        adamw_update(p, 3 * (p - target) ** 2, state, **options)
    assert state["step"] == 6
    assert torch.allclose(p, ref, rtol=1e-6, atol=1e-7)


def test_aux_groups_get_adamw_defaults_and_step_like_adamw():
    matrix, bias = torch.nn.Parameter(gaussian(6, 4, 4)), torch.nn.Parameter(gaussian(1, 6, 5)[0])
    groups = muon_param_groups([matrix], [bias], lr=0.05, aux_lr=1e-2, nesterov=False)
    opt = Muon(groups)
    muon_group, aux = opt.param_groups
    assert muon_group["use_muon"] and muon_group["lr"] == 0.05 and muon_group["nesterov"] is False
    assert not aux["use_muon"] and aux["lr"] == 1e-2 and aux["betas"] == (0.9, 0.95) and aux["eps"] == 1e-10
    assert muon_param_groups([matrix], [], lr=0.1) == [{"params": [matrix], "use_muon": True, "lr": 0.1}]
    twin = torch.nn.Parameter(bias.detach().clone())
    reference = torch.optim.AdamW([twin], lr=1e-2, betas=(0.9, 0.95), eps=1e-10, weight_decay=0.0)
    for k in range(3):
        target = gaussian(1, 6, 30 + k)[0]
        mine = cubic_steps(opt, [matrix, bias], [[torch.zeros(6, 4), target]])
        theirs = cubic_steps(reference, [twin], [[target]])
        assert torch.allclose(mine[1], theirs[0], atol=1e-6)


def test_bad_options_name_the_field():
    with pytest.raises(ValueError, match="momentum_form"):
        Muon([torch.nn.Parameter(torch.zeros(3, 3))], momentum_form="adam")
    with pytest.raises(ValueError, match="use_muon=False"):
        Muon([torch.nn.Parameter(torch.zeros(3))])
    with pytest.raises(ValueError, match="lr"):
        Muon([torch.nn.Parameter(torch.zeros(3, 3))], lr=-1)


def test_first_grad_init_and_closure_and_decoupled_weight_decay():
    W = torch.nn.Parameter(gaussian(5, 3, 6))
    start = W.detach().clone()
    opt = Muon([W], lr=0.1, weight_decay=0.5, nesterov=False, orthogonalizer="svd", momentum_init="first_grad")
    target = gaussian(5, 3, 7)

    def closure():
        opt.zero_grad()
        loss = ((W - target) ** 2).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert loss.item() == pytest.approx(float(((start - target) ** 2).sum()))
    # first step: buffer = G, update = polar(G); decay multiplies theta before the update
    expected = start * (1 - 0.1 * 0.5) - 0.1 * muon_scale((5, 3)) * polar_factor(2 * (start - target))
    assert torch.allclose(W.detach(), expected, atol=1e-6)
    assert torch.equal(opt.state[W]["momentum_buffer"], 2 * (start - target))


def test_soft_polar_exact_limits_and_iterative_agreement():
    X = gaussian(12, 8, 8, torch.float64)
    U, S, Vh = torch.linalg.svd(X, full_matrices=False)
    Y, singular = soft_polar_exact(X, 3.0)
    assert torch.allclose(singular, S)
    assert torch.allclose(U.T @ Y @ Vh.T, torch.diag(3 * S / torch.sqrt(1 + 9 * S**2)), atol=1e-10)  # same vectors
    big, _ = soft_polar_exact(X, 1e9)
    assert float((big.T @ big - torch.eye(8, dtype=torch.float64)).abs().max()) < 1e-5
    tiny, _ = soft_polar_exact(X, 1e-6)
    assert torch.allclose(tiny, 1e-6 * X, rtol=1e-9)
    # well-conditioned case: X X^T + tau^-2 I has eigenvalues in a narrow band, so 30 coupled NS steps converge
    Q, _ = torch.linalg.qr(gaussian(12, 8, 9, torch.float64))
    W = Q @ torch.diag(torch.linspace(0.5, 1.5, 8, dtype=torch.float64)) @ torch.linalg.qr(gaussian(8, 8, 10, torch.float64))[0]
    assert torch.allclose(soft_polar_iterative(W, 2.0, ns_steps=30), soft_polar_exact(W, 2.0)[0], atol=1e-6)
    assert torch.allclose(soft_polar_iterative(W.T, 2.0, ns_steps=30), soft_polar_exact(W.T, 2.0)[0], atol=1e-6)


def matrix_problem_steps(optimizer, W, steps, seed=0):
    generator = torch.Generator().manual_seed(seed)
    target = torch.randn(W.shape, generator=generator)
    trace = []
    for _ in range(steps):
        noise = 0.1 * torch.randn(W.shape, generator=generator)
        optimizer.zero_grad()
        W.grad = (W.detach() - target) + noise
        optimizer.step()
        trace.append(W.detach().clone())
    return trace


def test_softmuon_equals_muon_in_sign_phase_then_builds_schedule_once():
    W0 = gaussian(10, 6, 11)
    muon_W, soft_W = torch.nn.Parameter(W0.clone()), torch.nn.Parameter(W0.clone())
    muon_trace = matrix_problem_steps(Muon([muon_W], lr=0.05), muon_W, 20)
    soft = SoftMuon([soft_W], lr=0.05, total_steps=20, alpha_sign=0.5)
    generator = torch.Generator().manual_seed(0)
    target = torch.randn(W0.shape, generator=generator)
    for k in range(1, 21):
        noise = 0.1 * torch.randn(W0.shape, generator=generator)
        soft.zero_grad()
        soft_W.grad = (soft_W.detach() - target) + noise
        grad = soft_W.grad.clone()
        soft.step()
        schedules = soft.state["transition"]["schedules"]
        if k <= 10:
            assert torch.equal(soft_W.detach(), muon_trace[k - 1]) and not schedules and soft.stats["phase"] == "sign"
        if k == 11:
            built = schedules[0].clone()
            # from the raw gradient's singular values (not the momentum), c_eps = phi^-1(1 - 1e-4)
            expected = TemperatureSchedule.build(torch.linalg.svdvals(grad.double()), 10, algebraic_c_eps(1e-4), tau_max=1e9)
            assert torch.equal(built, expected.taus) and built[0] == 1e9 and soft.stats["tau"] == 1e9
        if k > 11:
            assert torch.equal(schedules[0], built) and soft.stats["phase"] == "soft"
    assert 0.0 <= soft.stats["saturated_fraction"] <= 1.0


def test_softmuon_state_dict_round_trip_keeps_schedule():
    W = torch.nn.Parameter(gaussian(6, 4, 12))
    opt = SoftMuon([W], lr=0.05, total_steps=8, alpha_sign=0.5)
    matrix_problem_steps(opt, W, 6)
    buffer = io.BytesIO()
    torch.save(opt.state_dict(), buffer)  # as a checkpoint does: an in-memory state_dict shares tensors
    buffer.seek(0)
    saved = torch.load(buffer)
    W2 = torch.nn.Parameter(W.detach().clone())
    resumed = SoftMuon([W2], lr=0.05, total_steps=8, alpha_sign=0.5)
    resumed.load_state_dict(saved)
    assert resumed.state["transition"]["step"] == 6
    assert torch.equal(resumed.state["transition"]["schedules"][0], opt.state["transition"]["schedules"][0])
    a, b = matrix_problem_steps(opt, W, 2, seed=3), matrix_problem_steps(resumed, W2, 2, seed=3)
    assert torch.equal(a[-1], b[-1])
