"""Randomized zeroth-order Hessian estimators behind one interface.

Every estimator takes (objective, point, query budget K, torch.Generator) and returns a `HessianEstimate`:
the estimate as a low-rank-plus-identity matrix sum_i w_i u_i u_i^T + shift * I (never formed unless asked),
and the number of function queries it spent. The objective maps a batch of points (m, d) to values (m,).

Gaussian-smoothing family with u ~ N(0, I) and A = u u^T - I (E[A] = 0, so any constant baseline b keeps it
unbiased for the Hessian of f_mu):
- s1: b = 0, (1/(K mu^2)) sum f_k A_k; K queries.
- s2: b = f(theta), (1/(K mu^2)) sum (f_k - f(theta)) A_k; K + 1 queries.
- scd: symmetric central differences on K' = (K - 1) // 2 directions, with "- I"; 2K' + 1 queries.
- cd: as scd without "- I": biased, its mean is H + tr(H)/2 I (report only).
- zovh: the sample-mean baseline, 1/((K-1) mu^2) sum (f_k - fbar) u_k u_k^T (the "- I" cancels since
  sum (f_k - fbar) = 0; 1/(K-1) makes it exactly unbiased); K queries.
- zovh_reuse: zovh on the current K pairs plus the (u, f) pairs of the previous `histories` calls (a FIFO
  buffer; stateful, one instance per path of points); K new queries.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Callable

import torch

Objective = Callable[[torch.Tensor], torch.Tensor]  # (m, d) -> (m,)


@dataclass
class HessianEstimate:
    """H_hat = U^T diag(weights) U + shift * I with U (n, d); `queries` new function values spent."""

    U: torch.Tensor
    weights: torch.Tensor
    shift: float
    queries: int

    def dense(self) -> torch.Tensor:
        eye = torch.eye(self.U.shape[1], dtype=self.U.dtype, device=self.U.device)
        return self.U.T @ (self.weights[:, None] * self.U) + self.shift * eye

    def frobenius_error(self, H: torch.Tensor) -> float:
        """||H_hat - H||_F without forming H_hat: ||H_hat||^2 - 2 <H_hat, H> + ||H||^2 through (u_i . u_j)^2 and
        u_i^T H u_i only (the route that makes d = 5000 affordable)."""
        U, w, a, d = self.U, self.weights, self.shift, self.U.shape[1]
        norms = (U * U).sum(1)
        own = w @ ((U @ U.T) ** 2) @ w + 2 * a * (w @ norms) + a * a * d
        cross = w @ ((U @ H) * U).sum(1) + a * torch.trace(H)
        return float(torch.sqrt(torch.clamp(own - 2 * cross + (H * H).sum(), min=0.0)))


def directions(generator: torch.Generator, count: int, d: int, dtype=torch.float64) -> torch.Tensor:
    return torch.randn(count, d, generator=generator, dtype=dtype)


def baseline_estimate(U: torch.Tensor, values: torch.Tensor, baseline, mu: float, normaliser: float,
                      queries: int, minus_identity: bool = True) -> HessianEstimate:
    """(1/(normaliser mu^2)) sum_k (f_k - b)(u_k u_k^T - I): the rank-K part plus the shift -sum(f_k - b)/..."""
    centred = (values - baseline) / (normaliser * mu * mu)
    shift = -float(centred.sum()) if minus_identity else 0.0
    return HessianEstimate(U, centred, shift, queries)


def mean_baseline_estimate(U: torch.Tensor, values: torch.Tensor, mu: float, queries: int) -> HessianEstimate:
    """1/((n-1) mu^2) sum_i (f_i - fbar) u_i u_i^T: the ZoVH estimator on n (u, f) pairs (shift 0 exactly)."""
    n = len(values)
    return HessianEstimate(U, (values - values.mean()) / ((n - 1) * mu * mu), 0.0, queries)


def s1(f: Objective, theta: torch.Tensor, K: int, generator: torch.Generator, mu: float) -> HessianEstimate:
    U = directions(generator, K, theta.numel(), theta.dtype)
    return baseline_estimate(U, f(theta + mu * U), 0.0, mu, K, K)


def s2(f: Objective, theta: torch.Tensor, K: int, generator: torch.Generator, mu: float) -> HessianEstimate:
    U = directions(generator, K, theta.numel(), theta.dtype)
    values = f(torch.cat([theta[None], theta + mu * U]))
    return baseline_estimate(U, values[1:], values[0], mu, K, K + 1)


def _central(f: Objective, theta: torch.Tensor, K: int, generator: torch.Generator, mu: float,
             minus_identity: bool) -> HessianEstimate:
    pairs = max((K - 1) // 2, 1)
    U = directions(generator, pairs, theta.numel(), theta.dtype)
    values = f(torch.cat([theta[None], theta + mu * U, theta - mu * U]))
    second = values[1:pairs + 1] + values[pairs + 1:] - 2 * values[0]
    return baseline_estimate(U, second, 0.0, mu, 2 * pairs, 2 * pairs + 1, minus_identity)


def scd(f: Objective, theta: torch.Tensor, K: int, generator: torch.Generator, mu: float) -> HessianEstimate:
    return _central(f, theta, K, generator, mu, minus_identity=True)


def cd(f: Objective, theta: torch.Tensor, K: int, generator: torch.Generator, mu: float) -> HessianEstimate:
    return _central(f, theta, K, generator, mu, minus_identity=False)


def zovh(f: Objective, theta: torch.Tensor, K: int, generator: torch.Generator, mu: float) -> HessianEstimate:
    if K < 2:
        raise ValueError(f"zovh needs K >= 2 queries, got {K}")
    U = directions(generator, K, theta.numel(), theta.dtype)
    return mean_baseline_estimate(U, f(theta + mu * U), mu, K)


class ZoVHReuse:
    """zovh on the pairs of the current call and of the previous `histories` calls, as if all were queried at
    the current point (slightly biased when the point moves; no new queries). histories = 0 is zovh."""

    def __init__(self, histories: int):
        self.rounds: deque[tuple[torch.Tensor, torch.Tensor]] = deque(maxlen=histories + 1)

    def __call__(self, f: Objective, theta: torch.Tensor, K: int, generator: torch.Generator,
                 mu: float) -> HessianEstimate:
        U = directions(generator, K, theta.numel(), theta.dtype)
        self.rounds.append((U, f(theta + mu * U)))
        return mean_baseline_estimate(torch.cat([u for u, _ in self.rounds]),
                                      torch.cat([v for _, v in self.rounds]), mu, K)


STATELESS = {"s1": s1, "s2": s2, "scd": scd, "cd": cd, "zovh": zovh}
NAMES = (*STATELESS, "zovh_reuse")


def estimator(name: str, histories: int = 4):
    """The estimator `name` of NAMES; zovh_reuse is a fresh buffer (one per path of points)."""
    if name == "zovh_reuse":
        return ZoVHReuse(histories)
    if name not in STATELESS:
        raise ValueError(f"unknown Hessian estimator {name!r} (known: {', '.join(NAMES)})")
    return STATELESS[name]
