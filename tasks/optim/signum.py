"""Signum, SoftSignum and HardSwitchSign: one momentum update with three maps after the sign phase.

    m <- g on the first step, else beta m + (1 - dampening) g     (torch.optim.SGD's buffer; dampening = beta is EMA)
    d <- g + beta m if nesterov else m
    u <- sign(d) for k <= T_sign; afterwards tanh(tau_j d) (soft), d (hard_switch) or still sign(d) (sign)
    theta <- theta (1 - lr wd) - lr_eff u

SoftSignum's temperatures come from a schedule fitted once, at step T_sign + 1, to the group's momentum entries
(tasks.optim.temperature, c_eps = atanh(1 - eps)). Signum is the same code with no transition, which makes
SoftSignum with alpha_sign = 1 bit-identical to it.
"""
from __future__ import annotations

from typing import Literal

import torch

from tasks.optim.dropin import DropInOptimizer
from tasks.optim.temperature import TemperatureSchedule, Transition, tanh_c_eps, transition_state

MODES = ("sign", "soft", "hard_switch")


def momentum_direction(grad: torch.Tensor, state: dict, *, momentum: float, dampening: float,
                       nesterov: bool) -> torch.Tensor:
    """Update state['momentum_buffer'] in place (created from the first gradient) and return d."""
    if "momentum_buffer" not in state:
        state["momentum_buffer"] = grad.clone()
    else:
        state["momentum_buffer"].mul_(momentum).add_(grad, alpha=1 - dampening)
    buf = state["momentum_buffer"]
    return grad + momentum * buf if nesterov else buf


def transition_map(d: torch.Tensor, phase: Literal["sign", "soft", "sgd"], tau: float | None = None) -> torch.Tensor:
    """u = sign(d), tanh(tau d) or d."""
    if phase == "sign":
        return torch.sign(d)
    if phase == "soft":
        return torch.tanh(tau * d)
    if phase == "sgd":
        return d
    raise ValueError(f"phase: must be 'sign', 'soft' or 'sgd', got {phase!r}")


def step_scale(directions: list[torch.Tensor], *, normalized: bool, sign_norm: bool) -> float:
    """lr_eff / lr: 1, or 1/||d|| (normalized) or ||d|| (sign_norm) with the norm over the whole group."""
    if not (normalized or sign_norm):
        return 1.0
    norm = float(torch.sqrt(sum((d.double() ** 2).sum() for d in directions)))
    if normalized:
        return 1.0 / norm if norm > 0 else 0.0
    return norm


class SignMomentum(DropInOptimizer):
    """The shared shell; use Signum, SoftSignum or HardSwitchSign.

    mode "sign": sign(d) throughout; "soft": tanh(tau d) after T_sign = floor(alpha_sign * total_steps);
    "hard_switch": d (plain momentum SGD, same lr) after T_sign. The step counter is optimizer-global.
    `stats` after each step: phase ("sign" / "soft" / "sgd"), tau (inf in the sign phase, None for sgd) of the first
    group, and saturated_fraction = mean(|u| >= 1 - eps) over all entries.
    """

    def __init__(self, params, *, lr: float, mode: str, momentum: float = 0.9, dampening: float = 0.0,
                 nesterov: bool = False, weight_decay: float = 0.0, normalized: bool = False, sign_norm: bool = False,
                 total_steps: int | None = None, alpha_sign: float = 0.9, eps: float = 1e-4, tau_max: float = 20.0,
                 newton_steps: int = 10, switch_scale: float = 1.0):
        if mode not in MODES:
            raise ValueError(f"mode: must be one of {MODES}, got {mode!r}")
        if lr < 0:
            raise ValueError(f"lr: must be >= 0, got {lr}")
        if not 0 <= momentum < 1:
            raise ValueError(f"momentum: must be in [0, 1), got {momentum}")
        if not 0 <= dampening <= 1:
            raise ValueError(f"dampening: must be in [0, 1], got {dampening}")
        if weight_decay < 0:
            raise ValueError(f"weight_decay: must be >= 0, got {weight_decay}")
        if normalized and sign_norm:
            raise ValueError("normalized, sign_norm: mutually exclusive, got both True")
        if not 0 < eps < 1:
            raise ValueError(f"eps: must be in (0, 1), got {eps}")
        if tau_max < 1:
            raise ValueError(f"tau_max: must be >= 1, got {tau_max}")
        if switch_scale <= 0:
            raise ValueError(f"switch_scale: must be > 0, got {switch_scale}")
        if mode != "sign" and total_steps is None:
            raise ValueError(f"total_steps: required for mode {mode!r} (the transition starts at alpha_sign * total_steps)")
        self.mode = mode
        self.transition = None if mode == "sign" else Transition(total_steps=total_steps, alpha_sign=alpha_sign)
        self.eps, self.tau_max, self.newton_steps = eps, tau_max, newton_steps
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, nesterov=nesterov, weight_decay=weight_decay,
                        normalized=normalized, sign_norm=sign_norm, switch_scale=switch_scale)
        super().__init__(params, defaults)
        self.stats: dict = {}

    def _phase(self, k: int) -> str:
        if self.transition is None or self.transition.in_sign_phase(k):
            return "sign"
        return "soft" if self.mode == "soft" else "sgd"

    def _temperature(self, index: int, k: int, buffers: list[torch.Tensor]) -> float:
        schedules = transition_state(self)["schedules"]
        if self.transition.builds_at(k):  # fitted to the momentum after this step's update
            values = torch.cat([b.reshape(-1) for b in buffers])
            schedules[index] = TemperatureSchedule.build(values, self.transition.length, tanh_c_eps(self.eps),
                                                         tau_max=self.tau_max, newton_steps=self.newton_steps).taus
        return TemperatureSchedule(schedules[index]).at(self.transition.index(k))

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        clock = transition_state(self)
        clock["step"] += 1
        k = clock["step"]
        phase = self._phase(k)
        taus, saturated, total = [], 0, 0
        for index, group in enumerate(self.param_groups):
            params = [p for p in group["params"] if p.grad is not None]
            if not params:
                continue
            directions = [momentum_direction(p.grad, self.state[p], momentum=group["momentum"],
                                             dampening=group["dampening"], nesterov=group["nesterov"]) for p in params]
            tau = None
            if phase == "sign":
                tau = float("inf")
            elif phase == "soft":
                tau = self._temperature(index, k, [self.state[p]["momentum_buffer"] for p in params])
            taus.append(tau)
            lr_eff = group["lr"] * step_scale(directions, normalized=group["normalized"], sign_norm=group["sign_norm"])
            for p, d in zip(params, directions):
                u = transition_map(d, phase, tau)
                if phase == "sgd" and group["switch_scale"] != 1.0:
                    u = u * group["switch_scale"]
                saturated += int((u.abs() >= 1 - self.eps).sum())
                total += u.numel()
                p.mul_(1 - group["lr"] * group["weight_decay"])
                p.add_(u, alpha=-lr_eff)
        self.stats = {"phase": phase, "tau": taus[0] if taus else None, "saturated_fraction": saturated / max(total, 1)}
        return loss


class Signum(SignMomentum):
    """Momentum + sign (SoftSignum with alpha_sign = 1)."""

    def __init__(self, params, lr: float = 1e-3, **options):
        super().__init__(params, lr=lr, mode="sign", **options)


class SoftSignum(SignMomentum):
    """Signum for floor(alpha_sign * total_steps) steps, then tanh(tau_j d) on the fitted schedule (tau_max 20)."""

    def __init__(self, params, lr: float = 1e-3, *, total_steps: int, **options):
        super().__init__(params, lr=lr, mode="soft", total_steps=total_steps, **options)


class HardSwitchSign(SignMomentum):
    """Signum for floor(alpha_sign * total_steps) steps, then plain momentum SGD (u = switch_scale d) with the
    same lr. switch_scale = tau_max is the control of SoftSignum whose schedule is clamped at tau_max everywhere
    (tanh(tau_max d) ~ tau_max d for small d)."""

    def __init__(self, params, lr: float = 1e-3, *, total_steps: int, **options):
        super().__init__(params, lr=lr, mode="hard_switch", total_steps=total_steps, **options)
