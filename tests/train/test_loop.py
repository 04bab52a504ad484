"""The training loop: determinism, closure counting, torch's and lion's optimizers, lr schedule,
evaluations, non-finite losses, stats, optimizer state bytes."""
from __future__ import annotations

import itertools

import pytest
import torch
import torch.nn.functional as F
from lion_pytorch import Lion

from tasks.core.device import single_torch_thread
from tasks.train.charlm import CharTransformer, evaluate_charlm, random_windows
from tasks.train.digits import MLP, batch_sampler, digits_split, evaluate_classifier
from tasks.train.loop import cosine_factor, run_training, state_bytes

single_torch_thread()


class TwiceSGD(torch.optim.Optimizer):
    """A closure optimizer in the LiMuon/S-Adam mould: one gradient at the current weights, one at a
    shifted point (same batch), `probes` forward-only calls, then an SGD step on the averaged gradient."""

    def __init__(self, params, lr: float, shift: float = 1e-2, probes: int = 2):
        super().__init__(params, {"lr": lr})
        self.shift, self.probes, self.stats = shift, probes, {}

    @torch.no_grad()
    def step(self, closure):
        params = [p for group in self.param_groups for p in group["params"]]
        loss = closure()
        first = [p.grad.clone() for p in params]
        for p in params:
            p.add_(self.shift)
        closure()
        probe = sum(closure(backward=False).item() for _ in range(self.probes)) / self.probes
        for p, g in zip(params, first):
            p.sub_(self.shift).sub_(self.param_groups[0]["lr"] * 0.5 * (g + p.grad))
        self.stats = {"probe_loss": torch.tensor(probe)}
        return loss


def digits_run(make_optimizer, steps=30, seed=0, **kwargs):
    split = digits_split(seed, 0.3, "pm1")
    model = MLP(seed=seed)
    next_batch = batch_sampler(len(split.y_train), 32, torch.Generator().manual_seed(seed))

    def loss_on_batch(indices):
        return F.cross_entropy(model(split.x_train[indices]), split.y_train[indices])

    evaluate = lambda: evaluate_classifier(model, split.x_test, split.y_test)
    return run_training(make_optimizer(model.parameters()), loss_on_batch, next_batch, steps, evaluate=evaluate, **kwargs)


@pytest.mark.parametrize("make", [lambda p: torch.optim.AdamW(p, lr=1e-2), lambda p: TwiceSGD(p, lr=0.1)],
                         ids=["adamw", "closure-optimizer"])
def test_same_seed_same_curves(make):
    a, b = digits_run(make, eval_every=10), digits_run(make, eval_every=10)
    assert a.curve == b.curve and a.evals == b.evals and a.final == b.final
    assert a.curve != digits_run(make, seed=1, eval_every=10).curve
    assert a.curve[-1]["loss"] < a.curve[0]["loss"] and a.final["accuracy"] > 0.5


def test_charlm_training_is_deterministic():
    data = torch.randint(0, 97, (3000,), generator=torch.Generator().manual_seed(0))

    def run():
        model = CharTransformer(seed=0)
        generator = torch.Generator().manual_seed(5)

        def loss_on_batch(batch):
            x, y = batch
            return F.cross_entropy(model(x).flatten(0, 1), y.flatten())

        return run_training(torch.optim.AdamW(model.parameters(), lr=3e-3), loss_on_batch,
                            lambda step: random_windows(data, 32, 4, generator), 5,
                            evaluate=lambda: evaluate_charlm(model, data, 32, max_windows=8))

    a, b = run(), run()
    assert a.curve == b.curve and a.final == b.final


def test_closure_calls_are_counted_with_and_without_backward():
    result = digits_run(lambda p: TwiceSGD(p, lr=0.1, probes=3), steps=7, log_every=3)
    assert (result.grad_evals, result.forward_evals) == (14, 21)
    assert [row["step"] for row in result.curve] == [3, 6, 7]  # every log_every steps and the last
    assert [row["grad_evals"] for row in result.curve] == [6, 12, 14]
    assert [row["forward_evals"] for row in result.curve] == [9, 18, 21]
    assert all(isinstance(row["probe_loss"], float) for row in result.curve)  # optimizer stats, as numbers
    evaluated = digits_run(lambda p: torch.optim.SGD(p, lr=0.1), steps=10, log_every=3, eval_every=4)
    assert [e["step"] for e in evaluated.evals] == [4, 8, 10]  # evaluations do not wait for logged steps
    assert (digits_run(lambda p: torch.optim.SGD(p, lr=0.1), steps=7).grad_evals) == 7


@pytest.mark.parametrize("make", [lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9), lambda p: Lion(p, lr=1e-4),
                                  lambda p: torch.optim.Muon([q for q in p if q.ndim == 2], lr=0.02)],
                         ids=["sgd", "lion", "torch-muon"])
def test_torch_and_lion_optimizers_train_through_the_loop(make):
    result = digits_run(make, steps=40)
    assert result.grad_evals == 40 and result.forward_evals == 0
    assert result.curve[-1]["loss"] < result.curve[0]["loss"]


def test_lr_factor_scales_the_initial_lr_of_every_group_and_evals_follow_the_schedule():
    factor = cosine_factor(10, floor=0.1)
    seen = []

    def make(params):
        params = list(params)
        return torch.optim.SGD([{"params": params[:2], "lr": 0.1}, {"params": params[2:], "lr": 0.01}], lr=0.1)

    def spy(i):
        seen.append(i)
        return factor(i)

    result = digits_run(make, steps=10, lr_factor=spy, eval_every=4, eval_at_start=True)
    assert seen == list(range(10))
    assert [row["lr"] for row in result.curve] == pytest.approx([0.1 * factor(i) for i in range(10)])
    assert [e["step"] for e in result.evals] == [0, 4, 8, 10] and result.final == result.evals[-1]


def test_non_finite_loss_raises_naming_the_step_or_stops():
    with pytest.raises(FloatingPointError, match="step 2 of 5"):
        digits_run(lambda p: torch.optim.SGD(p, lr=1e30), steps=5)
    result = digits_run(lambda p: torch.optim.SGD(p, lr=1e30), steps=5, on_nonfinite="stop")
    assert result.diverged_at == 2 and len(result.curve) == 2 and result.final["step"] == 2


def test_cosine_factor_endpoints_and_monotone():
    factor = cosine_factor(100, floor=0.1)
    assert factor(0) == 1.0 and factor(100) == pytest.approx(0.1) and factor(150) == pytest.approx(0.1)
    assert factor(50) == pytest.approx(0.55)
    values = [factor(i) for i in range(101)]
    assert all(a >= b for a, b in itertools.pairwise(values))
    with pytest.raises(ValueError, match="floor"):
        cosine_factor(10, floor=2.0)


def test_state_bytes_of_adamw_is_two_moments_plus_step_scalars():
    model = MLP(seed=0)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    assert state_bytes(optimizer) == 0
    model(torch.randn(4, 64)).sum().backward()
    optimizer.step()
    params = list(model.parameters())
    param_bytes = sum(p.numel() * p.element_size() for p in params)
    assert state_bytes(optimizer) == 2 * param_bytes + 4 * len(params)  # + one float32 `step` per parameter


def test_grad_norm_is_recorded_only_when_asked_and_the_optimizer_keeps_none():
    from tasks.optim.polyak import SPSSafe

    torch.manual_seed(0)
    x, y = torch.randn(32, 5), torch.randn(32)
    weights = torch.nn.Parameter(torch.zeros(5))

    def loss_on_batch(i):
        return ((x[i] @ weights - y[i]) ** 2).mean()

    def batches(step):
        return torch.arange(step % 4 * 8, step % 4 * 8 + 8)

    plain = run_training(torch.optim.SGD([weights], lr=0.01), loss_on_batch, batches, 3)
    assert "grad_norm_sq" not in plain.curve[0]
    weights.data.zero_()
    recorded = run_training(torch.optim.SGD([weights], lr=0.01), loss_on_batch, batches, 3, record_grad_norm=True,
                            log_every=2)
    assert [row["step"] for row in recorded.curve] == [2, 3]
    weights.data.zero_()
    by_hand = []
    for step in range(3):
        weights.grad = None
        loss_on_batch(batches(step)).backward()
        by_hand.append(float(weights.grad.double().square().sum()))
        with torch.no_grad():
            weights -= 0.01 * weights.grad
    assert [row["grad_norm_sq"] for row in recorded.curve] == by_hand[1:]
    weights.data.zero_()
    polyak = SPSSafe([weights], M=1.0)
    own = run_training(polyak, loss_on_batch, batches, 2, record_grad_norm=True)
    assert own.curve[-1]["grad_norm_sq"] == polyak.stats["grad_norm_sq"]  # the optimizer's own number stays
