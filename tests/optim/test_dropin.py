"""Every optimizer of tasks.optim as a drop-in torch.optim.Optimizer, tried as a user would: standard torch
closures, param groups, copy.deepcopy and pickle, state_dict round trips that resume bit-identically (RNG states
and transition schedules included); S-Adam with its brake off is torch.optim.AdamW."""
from __future__ import annotations

import copy
import io
import pickle
from collections.abc import Callable
from dataclasses import dataclass

import pytest
import torch
from torch import nn

from tasks.optim import LiMuon
from tasks.optim.muon import Muon, SoftMuon, muon_param_groups
from tasks.optim.polyak import IMASPSSafe, SPSMax, SPSSafe
from tasks.optim.prox_sgd import ProxSGD
from tasks.optim.sadam import PROBE_RNG, SAdam
from tasks.optim.signum import HardSwitchSign, Signum, SoftSignum

STEPS = 8
SOFT = dict(total_steps=STEPS, alpha_sign=0.5)  # sign phase 1-4, schedule fitted at step 5, soft phase 5-8


@dataclass(frozen=True)
class Case:
    make: Callable[[list, list], torch.optim.Optimizer]  # (matrices, others) -> optimizer
    matrix_rule: bool = False  # the others go to a use_muon=False group
    has_lr: bool = True

    def build(self, model: nn.Module) -> torch.optim.Optimizer:
        return self.make(*split(model))


def every(make):
    return lambda matrices, others: make([*matrices, *others])


CASES = {
    "Signum": Case(every(lambda p: Signum(p, lr=1e-2))),
    "SoftSignum": Case(every(lambda p: SoftSignum(p, lr=1e-2, **SOFT))),
    "HardSwitchSign": Case(every(lambda p: HardSwitchSign(p, lr=1e-2, switch_scale=2.0, **SOFT))),
    "Muon": Case(lambda m, o: Muon(muon_param_groups(m, o, lr=0.02, aux_lr=1e-2)), matrix_rule=True),
    "SoftMuon": Case(lambda m, o: SoftMuon(muon_param_groups(m, o, lr=0.02, aux_lr=1e-2), **SOFT), matrix_rule=True),
    "LiMuon": Case(lambda m, o: LiMuon(muon_param_groups(m, o, lr=0.02, aux_lr=1e-2), option=2, rank=2, seed=3),
                   matrix_rule=True),
    "SAdam": Case(every(lambda p: SAdam(p, lr=1e-2, seed=4))),
    "ProxSGD": Case(every(lambda p: ProxSGD(p, lr=0.05))),
    "SPSSafe": Case(every(lambda p: SPSSafe(p, M=1.0)), has_lr=False),
    "SPSMax": Case(every(lambda p: SPSMax(p, c=0.5, gamma_b=0.5)), has_lr=False),
    "IMASPSSafe": Case(every(lambda p: IMASPSSafe(p, M=0.0, weight_decay=0.01)), has_lr=False),  # M auto-init
}
NAMES = sorted(CASES)


def mlp(seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 3))


def split(model: nn.Module) -> tuple[list, list]:
    params = list(model.parameters())
    return [p for p in params if p.ndim == 2], [p for p in params if p.ndim < 2]


BATCHES = [(torch.randn(16, 5, generator=g), torch.randint(0, 3, (16,), generator=g))
           for g in [torch.Generator().manual_seed(11)] for _ in range(STEPS)]


def loss_of(model, batch):
    x, y = batch
    return nn.functional.cross_entropy(model(x), y)


def standard_closure(model, optimizer, batch, calls: list | None = None):
    """torch's closure: zero_grad, forward, backward, return the loss."""
    def closure():
        if calls is not None:
            calls.append(1)
        optimizer.zero_grad()
        loss = loss_of(model, batch)
        loss.backward()
        return loss
    return closure


def backward_closure(model, optimizer, batch):
    """tasks.train.loop's closure: closure(backward=False) only evaluates."""
    def closure(backward: bool = True):
        if not backward:
            with torch.no_grad():
                return loss_of(model, batch)
        optimizer.zero_grad()
        with torch.enable_grad():
            loss = loss_of(model, batch)
            loss.backward()
        return loss
    return closure


def train(model, optimizer, start: int, stop: int, closure_for=standard_closure) -> list:
    return [optimizer.step(closure_for(model, optimizer, BATCHES[i])) for i in range(start, stop)]


def weights(model) -> list[torch.Tensor]:
    return [p.detach().clone() for p in model.parameters()]


def assert_same(a: list[torch.Tensor], b: list[torch.Tensor]) -> None:
    assert len(a) == len(b) and all(torch.equal(x, y) for x, y in zip(a, b))


@pytest.mark.parametrize("name", NAMES)
def test_standard_closure_steps_like_the_forward_only_convention_and_leaves_the_start_gradient(name):
    case = CASES[name]
    reference = mlp()
    ref_opt = case.build(reference)
    train(reference, ref_opt, 0, STEPS, backward_closure)

    model = mlp()
    optimizer = case.build(model)
    for i in range(STEPS):
        start = copy.deepcopy(model)
        start.zero_grad()
        loss_of(start, BATCHES[i]).backward()
        loss = optimizer.step(standard_closure(model, optimizer, BATCHES[i]))
        assert float(loss.detach()) == float(loss_of(start, BATCHES[i]).detach())  # the loss at the weights the step started from
        assert_same([p.grad for p in model.parameters()], [p.grad for p in start.parameters()])
    assert_same(weights(model), weights(reference))


@pytest.mark.parametrize("name", NAMES)
def test_an_added_param_group_is_stepped_with_its_own_hyperparameters(name):
    case = CASES[name]
    extra = {"use_muon": False} if case.matrix_rule else {}
    for frozen in ([False, True] if case.has_lr else [False]):
        model = mlp()
        matrices, others = split(model)
        last_bias = others.pop()
        optimizer = case.make(matrices, others)
        optimizer.add_param_group({"params": [last_bias], **extra, **({"lr": 0.0} if frozen else {})})
        assert set(optimizer.defaults) <= set(optimizer.param_groups[-1])
        before = weights(model)
        train(model, optimizer, 0, 3)
        after = weights(model)
        moved = [not torch.equal(a, b) for a, b in zip(before, after)]
        assert moved == [True, True, True, not frozen]  # (W1, b1, W2, b2): b2 alone is the added group


@pytest.mark.parametrize("copier", ["deepcopy", "pickle"])
@pytest.mark.parametrize("name", NAMES)
def test_a_copy_continues_exactly_like_the_original(name, copier):
    model = mlp()
    optimizer = CASES[name].build(model)
    train(model, optimizer, 0, 5)  # past the soft optimizers' transition
    if copier == "deepcopy":
        model2, optimizer2 = copy.deepcopy((model, optimizer))
    else:
        model2, optimizer2 = pickle.loads(pickle.dumps((model, optimizer)))
    public = {k for k in vars(optimizer) if not k.startswith("_")}
    assert {k for k in vars(optimizer2) if not k.startswith("_")} == public
    losses = train(model, optimizer, 5, STEPS)
    losses2 = train(model2, optimizer2, 5, STEPS)
    assert [float(x.detach()) for x in losses] == [float(x.detach()) for x in losses2]
    assert_same(weights(model2), weights(model))
    assert optimizer2.stats == optimizer.stats


def round_trip(state_dict: dict, via: str) -> dict:
    if via == "deepcopy":
        return copy.deepcopy(state_dict)
    buffer = io.BytesIO()
    torch.save(state_dict, buffer)
    buffer.seek(0)
    return torch.load(buffer, weights_only=True)  # the safe loader reads every optimizer's checkpoint


@pytest.mark.parametrize("via", ["torch.save", "deepcopy"])
@pytest.mark.parametrize("save_at", [2, 6])  # before / after the soft optimizers' schedule is fitted
@pytest.mark.parametrize("name", NAMES)
def test_state_dict_round_trip_resumes_bit_identically(name, save_at, via):
    case = CASES[name]
    uninterrupted = mlp()
    train(uninterrupted, case.build(uninterrupted), 0, STEPS)

    model = mlp()
    optimizer = case.build(model)
    train(model, optimizer, 0, save_at)
    checkpoint = round_trip({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, via)
    del model, optimizer
    resumed = mlp(seed=1)  # a fresh model copy: its own weights are overwritten by the checkpoint
    resumed.load_state_dict(checkpoint["model"])
    fresh = case.build(resumed)
    fresh.load_state_dict(checkpoint["optimizer"])
    train(resumed, fresh, save_at, STEPS)
    assert_same(weights(resumed), weights(uninterrupted))


def test_the_probe_generator_state_is_in_the_state_dict():
    model = mlp()
    optimizer = CASES["SAdam"].build(model)
    train(model, optimizer, 0, 2)
    rng = optimizer.state_dict()["state"][PROBE_RNG]["state"]
    assert rng.dtype == torch.uint8 and not torch.equal(rng, torch.Generator().manual_seed(4).get_state())


@pytest.mark.parametrize("name", ["SoftSignum", "SoftMuon", "IMASPSSafe", "SAdam"])
def test_two_optimizers_loaded_from_one_state_dict_share_no_counter(name):
    case = CASES[name]
    model = mlp()
    optimizer = case.build(model)
    train(model, optimizer, 0, 5)
    state_dict = optimizer.state_dict()
    first_model, second_model = copy.deepcopy(model), copy.deepcopy(model)
    first, second = case.build(first_model), case.build(second_model)
    first.load_state_dict(state_dict)
    second.load_state_dict(state_dict)
    keys = [k for k in first.state if not isinstance(k, torch.Tensor)]
    before = copy.deepcopy({k: second.state[k] for k in keys})
    after_first = copy.deepcopy({k: first.state[k] for k in keys})
    train(first_model, first, 5, 6)
    assert keys and not same({k: first.state[k] for k in keys}, after_first)  # first's counters moved ...
    assert same({k: second.state[k] for k in keys}, before)  # ... second's did not


def same(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.shape == b.shape and torch.equal(a, b)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b


# ------------------------------------------------------------------ S-Adam's probes

def sadam_run(closure_for, steps: int = STEPS, **options):
    model = mlp()
    optimizer = SAdam(model.parameters(), lr=1e-2, weight_decay=0.05, seed=4, **options)
    calls: list = []
    for i in range(steps):
        optimizer.step(closure_for(model, optimizer, BATCHES[i], calls))
    return weights(model), optimizer, len(calls)


@pytest.mark.parametrize("off", [{"strength": 0.0}, {"rho_cap": 0.0}])
def test_brake_off_skips_the_probes_and_is_adamw_exactly(off):
    reference = mlp()
    adamw = torch.optim.AdamW(reference.parameters(), lr=1e-2, weight_decay=0.05)
    train(reference, adamw, 0, STEPS)
    got, optimizer, calls = sadam_run(standard_closure, **off)
    assert_same(got, weights(reference))
    assert calls == STEPS  # one closure call per step: no probe
    assert optimizer.stats == {"damp": 1.0} and PROBE_RNG not in optimizer.state

    model = mlp()  # no closure at all, as with AdamW: backward by hand, then step()
    optimizer = SAdam(model.parameters(), lr=1e-2, weight_decay=0.05, **off)
    for batch in BATCHES:
        optimizer.zero_grad()
        loss_of(model, batch).backward()
        optimizer.step()
    assert_same(weights(model), weights(reference))


def test_probes_of_a_standard_closure_a_probe_function_and_the_backward_convention_agree():
    def kw_closure(model, optimizer, batch, calls):
        inner = backward_closure(model, optimizer, batch)

        def closure(backward: bool = True):
            calls.append(backward)
            return inner(backward)
        return closure

    def in_place_zeroing(model, optimizer, batch, calls):  # zero_grad(set_to_none=False) reuses .grad
        def closure():
            calls.append(1)
            optimizer.zero_grad(set_to_none=False)
            loss = loss_of(model, batch)
            loss.backward()
            return loss
        return closure

    expected, _, kw_calls = sadam_run(kw_closure)
    assert kw_calls == STEPS * 9  # one backward + k = 8 forward-only probes per step
    for closure_for in (standard_closure, in_place_zeroing):  # each probe runs the closure: forward + backward
        got, optimizer, calls = sadam_run(closure_for)
        assert_same(got, expected)
        assert calls == STEPS * 9 and 0 < optimizer.stats["damp"] < 1

    model = mlp()
    optimizer = SAdam(model.parameters(), lr=1e-2, weight_decay=0.05, seed=4)
    calls = []
    for batch in BATCHES:
        optimizer.step(standard_closure(model, optimizer, batch, calls), probe=lambda: loss_of(model, batch))
    assert_same(weights(model), expected)
    assert len(calls) == STEPS  # the probes used the probe function, not the closure


def test_limuon_second_gradient_is_the_same_with_a_closure_that_does_not_zero():
    """LiMuon zeroes before each of its two closure calls, so zeroing inside the closure (torch's way) or not
    (as LiMuon's own tests do) gives the same steps."""
    def no_zeroing(model, optimizer, batch):
        def closure():
            loss = loss_of(model, batch)
            loss.backward()
            return loss
        return closure

    runs = []
    for closure_for in (standard_closure, no_zeroing):
        model = mlp()
        optimizer = CASES["LiMuon"].build(model)
        train(model, optimizer, 0, STEPS, closure_for)
        assert optimizer.stats["step_grad_evals"] == 2
        runs.append(weights(model))
    assert_same(*runs)
