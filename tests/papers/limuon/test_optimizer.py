"""LiMuon (spec limuon §3.2, §10, §11): the STORM recursion, both options, same-batch gradient pairs,
state accounting and a state_dict round trip."""
from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

from tasks.optim.limuon import LiMuon, storm_estimate
from tasks.optim.muon import muon_param_groups
from tasks.optim.rsvd import low_rank_elements


def least_squares(seed: int = 0, m: int = 12, n: int = 8, samples: int = 64):
    """A weight W (m x n) and a closure factory over fixed mini-batches of y = W* x + noise."""
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(samples, n, generator=g, dtype=torch.float64)
    Y = X @ torch.randn(m, n, generator=g, dtype=torch.float64).T + 0.3 * torch.randn(samples, m, generator=g, dtype=torch.float64)
    W = nn.Parameter(torch.zeros(m, n, dtype=torch.float64))

    def closure_for(step: int):
        rows = torch.arange(step * 8, step * 8 + 8) % samples

        def closure(backward: bool = True):
            loss = 0.5 * ((X[rows] @ W.T - Y[rows]) ** 2).sum(1).mean()
            if backward:
                loss.backward()
            return loss
        return closure
    return W, closure_for


def run(optimizer, closure_for, steps: int, start: int = 0):
    for step in range(start, start + steps):
        optimizer.step(closure_for(step))


def test_storm_estimate_is_the_stated_recursion():
    g, g_old, M = torch.tensor([1.0, 2.0]), torch.tensor([0.5, -1.0]), torch.tensor([3.0, 0.0])
    torch.testing.assert_close(storm_estimate(g, g_old, M, 0.25), g + 0.75 * (M - g_old))
    torch.testing.assert_close(storm_estimate(g, g_old, M, 1.0), g)


def test_full_rank_option_2_equals_option_1():
    (W1, closures1), (W2, closures2) = least_squares(), least_squares()  # same seed: same data, two copies
    first = LiMuon([W1], lr=0.05, beta=0.3, option=1)
    second = LiMuon([W2], lr=0.05, beta=0.3, option=2, rank=8, oversampling=2)
    for step in range(10):
        first.step(closures1(step))
        second.step(closures2(step))
        torch.testing.assert_close(W2, W1, atol=1e-5, rtol=0)
    assert first.state_elements()["estimator"] == 96 and second.state_elements()["estimator"] == low_rank_elements((12, 8), 8)


@pytest.mark.parametrize("option", [1, 2])
def test_beta_one_makes_the_estimator_the_plain_gradient(option):
    W, closure_for = least_squares(1)
    optimizer = LiMuon([W], lr=0.05, beta=1.0, option=option, rank=3, keep_estimates=True)
    for step in range(4):
        optimizer.step(closure_for(step))
        torch.testing.assert_close(optimizer.estimates[W], W.grad)  # .grad: at the weights before the update


def test_storm_identity_on_a_quadratic_with_weight_independent_noise():
    """f(W; xi) = 0.5 ||W - A||^2 + <N_xi, W>: M_{t+1} - grad F(W_{t+1}) = (1 - beta)(M_t - grad F(W_t)) + beta N."""
    g = torch.Generator().manual_seed(2)
    A = torch.randn(6, 4, generator=g, dtype=torch.float64)
    noises = torch.randn(8, 6, 4, generator=g, dtype=torch.float64)
    W = nn.Parameter(torch.zeros(6, 4, dtype=torch.float64))
    beta = 0.2
    optimizer = LiMuon([W], lr=0.1, beta=beta, option=1, keep_estimates=True)
    error = None
    for step, noise in enumerate(noises):
        def closure(noise=noise):
            loss = 0.5 * ((W - A) ** 2).sum() + (noise * W).sum()
            loss.backward()
            return loss
        true_grad = (W - A).detach().clone()
        optimizer.step(closure)
        new_error = optimizer.estimates[W] - true_grad
        expected = noise if error is None else (1 - beta) * error + beta * noise
        torch.testing.assert_close(new_error, expected, atol=1e-12, rtol=0)
        error = new_error


class Recorder(nn.Module):
    """A dropout MLP whose forward notes the batch id, the first weight and the dropout mask it saw."""

    def __init__(self):
        super().__init__()
        self.fc1, self.drop, self.fc2 = nn.Linear(6, 16), nn.Dropout(0.5), nn.Linear(16, 3)
        self.seen = []

    def forward(self, x, batch_id):
        h = self.drop(torch.sigmoid(self.fc1(x)))  # sigmoid > 0: zeros are dropout only
        self.seen.append((batch_id, self.fc1.weight.detach().clone(), (h == 0).clone()))
        return self.fc2(h)


def test_both_gradients_of_a_step_use_the_same_batch_mask_and_the_previous_weights():
    torch.manual_seed(0)
    model = Recorder()
    optimizer = LiMuon(muon_param_groups([model.fc1.weight, model.fc2.weight], [model.fc1.bias, model.fc2.bias],
                                         lr=0.05, aux_lr=1e-2), option=2, rank=2)
    drawn = []

    def next_batch():  # a counting batch source: one draw per step
        drawn.append(len(drawn))
        return drawn[-1], torch.randn(5, 6), torch.randint(0, 3, (5,))

    weights_at_step = []
    for step in range(4):
        batch_id, x, y = next_batch()
        weights_at_step.append(model.fc1.weight.detach().clone())

        def closure():
            loss = nn.functional.cross_entropy(model(x, batch_id), y)
            loss.backward()
            return loss
        start = len(model.seen)
        optimizer.step(closure)
        calls = model.seen[start:]
        assert len(calls) == (1 if step == 0 else 2) and optimizer.stats["step_grad_evals"] == len(calls)
        assert all(b == batch_id for b, _, _ in calls) and len(drawn) == step + 1
        assert torch.equal(calls[0][1], weights_at_step[step])
        if step:
            assert torch.equal(calls[1][1], weights_at_step[step - 1])  # g_old at W_t, not at W_{t+1}
            assert torch.equal(calls[0][2], calls[1][2])  # the dropout mask is replayed


def test_state_elements_follow_the_formula_and_nothing_else_is_kept():
    shapes = [(12, 8), (8, 20), (5, 5)]
    matrices = [nn.Parameter(torch.randn(*s)) for s in shapes]
    bias = nn.Parameter(torch.randn(7))
    optimizer = LiMuon(muon_param_groups(matrices, [bias], lr=0.02), option=2, rank=4)

    def closure():
        loss = sum((w ** 2).sum() for w in matrices) + (bias ** 3).sum()
        loss.backward()
        return loss
    for _ in range(3):
        optimizer.step(closure)
    counts = optimizer.state_elements()
    assert counts == {"estimator": sum(low_rank_elements(s, 4) for s in shapes),
                      "previous_weights": sum(r * c for r, c in shapes), "aux": 2 * 7}
    held = sum(v.numel() for p in matrices for v in optimizer.state[p].values() if torch.is_tensor(v))
    assert held == counts["estimator"] + counts["previous_weights"]


@pytest.mark.parametrize("orthogonalizer", ["svd", "ns5"])
def test_state_dict_round_trip_continues_identically(orthogonalizer):
    W, closure_for = least_squares(3)
    optimizer = LiMuon([W], lr=0.05, option=2, rank=3, orthogonalizer=orthogonalizer, seed=7)
    run(optimizer, closure_for, 3)
    saved_state, saved_weights = copy.deepcopy(optimizer.state_dict()), W.detach().clone()
    run(optimizer, closure_for, 4, start=3)
    expected = W.detach().clone()

    W.data.copy_(saved_weights)
    resumed = LiMuon([W], lr=0.05, option=2, rank=3, orthogonalizer=orthogonalizer, seed=7)
    resumed.load_state_dict(saved_state)
    run(resumed, closure_for, 4, start=3)
    assert torch.equal(W.detach(), expected)


def test_same_seed_same_numbers_and_option_2_state_is_low_rank():
    results = []
    for _ in range(2):
        W, closure_for = least_squares(4)
        optimizer = LiMuon([W], lr=0.05, option=2, rank=2, oversampling=2, seed=1)
        run(optimizer, closure_for, 5)
        results.append(W.detach().clone())
        assert optimizer.state[W]["U"].shape == (12, 2) and "estimator" not in optimizer.state[W]
        assert 0 < optimizer.stats["compression_error"] < 1
    assert torch.equal(*results)


def test_clip_bounds_the_estimator_norm():
    W, closure_for = least_squares(5)
    optimizer = LiMuon([W], lr=0.05, option=1, clip=0.5, keep_estimates=True)
    run(optimizer, closure_for, 3)
    assert torch.linalg.norm(optimizer.estimates[W]) == pytest.approx(0.5)


@pytest.mark.parametrize("option,value", [("beta", 0.0), ("beta", 1.5), ("option", 3), ("rank", 0),
                                          ("orthogonalizer", "qr"), ("clip", -1.0), ("lr", -0.1)])
def test_bad_options_name_the_field(option, value):
    with pytest.raises(ValueError, match=option):
        LiMuon([nn.Parameter(torch.zeros(3, 3))], **{option: value})


def test_step_without_closure_and_vector_in_a_matrix_group_are_refused():
    with pytest.raises(ValueError, match="closure"):
        LiMuon([nn.Parameter(torch.zeros(3, 3))]).step()
    with pytest.raises(ValueError, match="use_muon=False"):
        LiMuon([nn.Parameter(torch.zeros(3))])
