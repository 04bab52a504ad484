"""One training loop for every optimizer of the project, built on torch's closure convention.

`loss = optimizer.step(closure)`: the optimizer calls `closure()` (forward + backward) as often as
its method needs (LiMuon twice, once at its previous weights) and `closure(backward=False)` for
forward-only probes (S-Adam). Within one step every call sees the same batch. torch's optimizers
(AdamW, SGD, Muon) and lion_pytorch.Lion call the closure once and work unchanged.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import torch

from tasks.optim.grads import global_grad_norm_sq

RESERVED_KEYS = ("step", "loss", "lr", "grad_evals", "forward_evals")


@dataclass
class TrainResult:
    """curve: one row per logged step (step, loss, lr, grad_evals, forward_evals, plus the optimizer's
    `stats`); evals: one row per evaluation (step + what `evaluate` returned); final: the last
    evaluation ({} without `evaluate`); wall_time_s: the training loop's time (batches, steps, logging;
    evaluations excluded, queued GPU work included); grad_evals / forward_evals: closure calls with /
    without backward; diverged_at: the step whose loss was not finite with on_nonfinite="stop"."""

    curve: list[dict] = field(default_factory=list)
    evals: list[dict] = field(default_factory=list)
    final: dict = field(default_factory=dict)
    wall_time_s: float = 0.0
    grad_evals: int = 0
    forward_evals: int = 0
    diverged_at: int | None = None


def _scalar(value) -> Any:
    return value.item() if isinstance(value, torch.Tensor) and value.numel() == 1 else value


def _synchronize(optimizer: torch.optim.Optimizer) -> None:
    """Wait for queued GPU work so wall times measure it."""
    if any(p.is_cuda for group in optimizer.param_groups for p in group["params"]):
        torch.cuda.synchronize()


def _closure_for(optimizer: torch.optim.Optimizer, loss_on_batch: Callable[[Any], torch.Tensor], batch: Any,
                 counts: TrainResult, grad_norms: list[float] | None = None
                 ) -> tuple[Callable[..., torch.Tensor], list[torch.Tensor]]:
    """The step's closure on `batch` (counting its calls in `counts`) and a list that receives the
    loss of its first call; `grad_norms`, if given, receives ||g||^2 right after its first backward."""
    first_loss: list[torch.Tensor] = []

    def closure(backward: bool = True) -> torch.Tensor:
        if not backward:
            with torch.no_grad():
                loss = loss_on_batch(batch)
            counts.forward_evals += 1
        else:
            optimizer.zero_grad()
            with torch.enable_grad():  # optimizers decorate step() with no_grad
                loss = loss_on_batch(batch)
                loss.backward()
            counts.grad_evals += 1
            if grad_norms is not None and not grad_norms:
                grad_norms.append(global_grad_norm_sq(p for group in optimizer.param_groups for p in group["params"]))
        if not first_loss:
            first_loss.append(loss)
        return loss

    return closure, first_loss


def run_training(optimizer: torch.optim.Optimizer, loss_on_batch: Callable[[Any], torch.Tensor],
                 next_batch: Callable[[int], Any], steps: int, *, evaluate: Callable[[], dict] | None = None,
                 eval_every: int = 0, lr_factor: Callable[[int], float] | None = None, log_every: int = 1,
                 eval_at_start: bool = False, on_nonfinite: Literal["raise", "stop"] = "raise",
                 record_grad_norm: bool = False) -> TrainResult:
    """Run `steps` optimizer steps; step i (0-based) draws `next_batch(i)` and sets every param group's
    lr to its initial lr x `lr_factor(i)`. Rows are recorded after the update with step = i + 1.

    The logged loss is what `optimizer.step` returns (the closure's loss at the weights the step
    started from, for torch's optimizers), else the first closure call's loss. It is read (a device
    sync) only on logged steps and the last one, where a non-finite loss raises FloatingPointError
    naming the step (on_nonfinite="raise") or ends the run (on_nonfinite="stop", e.g. LR grids;
    the final evaluation still runs and shows the damage).

    record_grad_norm: logged rows also carry grad_norm_sq, the mini-batch ||g||^2 of the step's first
    backward (grad_norm_sq above), where the optimizer's `stats` record none of their own (SGD, Adam).
    """
    for name, value in (("steps", steps), ("log_every", log_every)):
        if value < 1:
            raise ValueError(f"{name}: must be >= 1, got {value!r}")
    if eval_every < 0:
        raise ValueError(f"eval_every: must be >= 0 (0 = only at the end), got {eval_every!r}")
    if on_nonfinite not in ("raise", "stop"):
        raise ValueError(f"on_nonfinite: must be 'raise' or 'stop', got {on_nonfinite!r}")
    initial_lrs = [group.get("lr") for group in optimizer.param_groups]  # stored once: lr_factor scales these
    result = TrainResult()
    eval_time = 0.0

    def run_evaluation(step: int) -> None:
        nonlocal eval_time
        _synchronize(optimizer)  # queued training work is not charged to the evaluation
        started = time.perf_counter()
        result.final = {"step": step, **evaluate()}
        result.evals.append(result.final)
        eval_time += time.perf_counter() - started

    started = time.perf_counter()
    if evaluate is not None and eval_at_start:
        run_evaluation(0)
    for i in range(steps):
        step = i + 1
        batch = next_batch(i)
        if lr_factor is not None:
            factor = lr_factor(i)
            for group, lr in zip(optimizer.param_groups, initial_lrs):
                if lr is not None:
                    group["lr"] = lr * factor
        logged = step % log_every == 0 or step == steps
        grad_norms = [] if record_grad_norm and logged else None
        closure, first_loss = _closure_for(optimizer, loss_on_batch, batch, result, grad_norms)
        returned = optimizer.step(closure)
        if logged:
            loss = float(_scalar(returned if returned is not None else first_loss[0]))
            stats = _optimizer_stats(optimizer)
            if grad_norms and "grad_norm_sq" not in stats:
                stats["grad_norm_sq"] = grad_norms[0]
            result.curve.append({"step": step, "loss": loss, "lr": _scalar(optimizer.param_groups[0].get("lr")),
                                 "grad_evals": result.grad_evals, "forward_evals": result.forward_evals, **stats})
            if not math.isfinite(loss):
                if on_nonfinite == "raise":
                    raise FloatingPointError(f"training loss is not finite ({loss}) at step {step} of {steps}")
                result.diverged_at = step
                break
        if evaluate is not None and eval_every and step % eval_every == 0 and step != steps:
            run_evaluation(step)
    if evaluate is not None:
        run_evaluation(step)
    _synchronize(optimizer)
    result.wall_time_s = time.perf_counter() - started - eval_time
    return result


def _optimizer_stats(optimizer: torch.optim.Optimizer) -> dict:
    """The optimizer's `stats` dict (if any) with one-element tensors turned into numbers."""
    stats = {k: _scalar(v) for k, v in (getattr(optimizer, "stats", None) or {}).items()}
    clashes = sorted(set(stats) & set(RESERVED_KEYS))
    if clashes:
        raise ValueError(f"optimizer stats keys {clashes} clash with the loop's own columns {RESERVED_KEYS}")
    return stats


def cosine_factor(total_steps: int, floor: float = 0.1) -> Callable[[int], float]:
    """lr factor for step i (0-based): cosine from 1 at i = 0 down to `floor` at i = total_steps
    (held at `floor` beyond)."""
    if total_steps < 1:
        raise ValueError(f"total_steps: must be >= 1, got {total_steps!r}")
    if not 0 <= floor <= 1:
        raise ValueError(f"floor: must be in [0, 1], got {floor!r}")

    def factor(i: int) -> float:
        progress = min(max(i, 0), total_steps) / total_steps
        return floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress))

    return factor


def state_bytes(optimizer: torch.optim.Optimizer) -> int:
    """Bytes of every tensor in optimizer.state, walked through dicts, lists and tuples (a tensor
    reached twice counts once). AdamW holds exp_avg and exp_avg_sq (2 x the parameter bytes) plus a
    scalar float32 `step` tensor per parameter; everything kept in state counts, schedules included."""
    seen: set[int] = set()

    def walk(value) -> int:
        if isinstance(value, torch.Tensor):
            if id(value) in seen:
                return 0
            seen.add(id(value))
            return value.numel() * value.element_size()
        if isinstance(value, dict):
            return sum(walk(v) for v in value.values())
        if isinstance(value, (list, tuple)):
            return sum(walk(v) for v in value)
        return 0

    return sum(walk(state) for state in optimizer.state.values())
