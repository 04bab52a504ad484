"""The SoftSignum/SoftMuon temperature: a schedule fitted once at the end of the sign phase.

At step T_sign + 1 the values of a parameter group (momentum entries, or gradient singular values) get a robust
Cauchy fit (median, MAD without the 1.4826 factor); schedule index j uses the quantile q_j of |X| at level
p_j = j / T_tr and tau_j = c_eps / q_j, clamped to [tau_min, tau_max], so that a fraction of about 1 - p_j of the
entries stays saturated (|S_tau| >= 1 - eps). Everything here runs in float64.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from pydantic import Field

from tasks.core.params import Params

SCALE_FLOOR = 1e-12  # guards an all-equal group (e.g. zero momentum): MAD 0 would divide by zero


def tanh_c_eps(eps: float) -> float:
    """atanh(1 - eps): the |tau d| at which tanh(tau d) reaches 1 - eps (SoftSignum; 4.9517 at 1e-4)."""
    return math.atanh(1 - eps)


def algebraic_c_eps(eps: float) -> float:
    """phi^-1(1 - eps) for phi(x) = x / sqrt(1 + x^2) (SoftMuon; 70.705 at 1e-4)."""
    y = 1 - eps
    return y / math.sqrt(1 - y * y)


def _cauchy_cdf(z):
    return 0.5 + np.arctan(z) / np.pi


def _cauchy_pdf(z):
    return 1 / (np.pi * (1 + z * z))


def folded_cauchy_quantile(p, loc: float, scale: float, newton_steps: int = 10) -> np.ndarray:
    """q with P(|X| <= q) = p for X ~ Cauchy(loc, scale), by Newton from the loc = 0 closed form s tan(pi p / 2) + |loc|."""
    p = np.asarray(p, dtype=np.float64)
    if np.any((p < 0) | (p >= 1)):
        raise ValueError(f"p: quantile levels must lie in [0, 1), got min {p.min()} max {p.max()}")
    if scale <= 0:
        raise ValueError(f"scale: must be > 0, got {scale}")
    q = scale * np.tan(np.pi * p / 2) + abs(loc)
    for _ in range(newton_steps):
        z1, z2 = (q - loc) / scale, (-q - loc) / scale
        residual = _cauchy_cdf(z1) - _cauchy_cdf(z2) - p
        q = np.maximum(q - residual / ((_cauchy_pdf(z1) + _cauchy_pdf(z2)) / scale), 0.0)
    return q


def robust_cauchy_fit(values: torch.Tensor) -> tuple[float, float]:
    """(median, median absolute deviation) of the signed values, the scale floored at SCALE_FLOOR."""
    x = values.detach().reshape(-1).to("cpu", torch.float64).numpy()
    if x.size == 0:
        raise ValueError("values: need at least one value to fit the temperature schedule")
    loc = float(np.median(x))
    return loc, max(float(np.median(np.abs(x - loc))), SCALE_FLOOR)


@dataclass(frozen=True)
class TemperatureSchedule:
    """taus[j] for j = 0..T_tr-1 (float64); `at(j)` clips j to the last entry."""

    taus: torch.Tensor

    @classmethod
    def build(cls, values: torch.Tensor, length: int, c_eps: float, *, tau_max: float, tau_min: float = 1.0,
              newton_steps: int = 10) -> "TemperatureSchedule":
        if length < 1:
            raise ValueError(f"length: the transition needs >= 1 step, got {length}")
        if not 0 < tau_min <= tau_max:
            raise ValueError(f"tau_min, tau_max: need 0 < tau_min <= tau_max, got {tau_min}, {tau_max}")
        loc, scale = robust_cauchy_fit(values)
        q = folded_cauchy_quantile(np.arange(length) / length, loc, scale, newton_steps)
        with np.errstate(divide="ignore"):  # q_0 = 0 -> tau = inf -> tau_max
            taus = np.clip(c_eps / q, tau_min, tau_max)
        return cls(torch.from_numpy(taus))

    def at(self, j: int) -> float:
        return float(self.taus[min(j, len(self.taus) - 1)])


class Transition(Params):
    """Step bookkeeping: steps 1..T_sign use the hard map, steps T_sign+1..T the schedule (index k - T_sign - 1)."""

    total_steps: int = Field(ge=1)
    alpha_sign: float = Field(ge=0, le=1)

    @property
    def sign_steps(self) -> int:
        # the tiny offset keeps floor(0.7 * 300) at 210 despite 0.7 * 300 = 209.99999999999997 in binary
        return min(math.floor(self.alpha_sign * self.total_steps + 1e-9), self.total_steps)

    @property
    def length(self) -> int:
        return self.total_steps - self.sign_steps

    def in_sign_phase(self, k: int) -> bool:
        return k <= self.sign_steps or self.length == 0

    def builds_at(self, k: int) -> bool:
        return self.length > 0 and k == self.sign_steps + 1

    def index(self, k: int) -> int:
        return min(k - self.sign_steps - 1, self.length - 1)


def transition_state(optimizer: torch.optim.Optimizer) -> dict:
    """The optimizer-global step counter and per-group schedules, kept in optimizer.state so state_dict carries them."""
    return optimizer.state.setdefault("transition", {"step": 0, "schedules": {}})

