"""Zeroth-order descent, batched over B runs that share the direction draws (one run per step size of a grid):
ZO-SGD with the f(theta) baseline, ZoAR (mean-baseline gradient with query reuse), and the curvature-aware
ZoVH step theta <- theta - eta * d with d ~ (lambda I + H_hat)^{-1} g_hat from the same queries.

The ZoVH direction (n pairs (u_i, f_i) in the buffer, fbar their mean, w_i = (f_i - fbar)/mu, h_i = w_i/mu):
  g = U^T w / (n-1);  s_i = ((n-1) u_i^T g - w_i ||u_i||^2) / (n-2)   (u_i^T of the leave-one-out gradient)
  c_i = h_i / (lambda (n-1) + h_i ||u_i||^2);  d = (g - U^T (c * s)) / lambda
i.e. Sherman-Morrison per rank-one piece, the sample in the Hessian term kept out of the gradient it multiplies.
A denominator with |.| < 1e-12 lambda (n-1) (possible where h_i < 0) drops its term; the drops are counted.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import torch

KINDS = ("zo_sgd", "zoar", "zovh")
GUARD = 1e-12


@dataclass
class DescentResult:
    """f along the run (B, len(steps)) at `steps`, the final f (B,), new queries per iteration, wall seconds,
    and how many ZoVH terms the denominator guard dropped."""

    steps: torch.Tensor
    values: torch.Tensor
    final: torch.Tensor
    queries_per_iteration: int
    wall_s: float
    guard_drops: int


def zovh_direction(U: torch.Tensor, F: torch.Tensor, mu: float, lam: float,
                   leave_one_out: bool = True) -> tuple[torch.Tensor, int]:
    """The bias-corrected inverse-Hessian-gradient direction for each of B runs: U (n, d) shared, F (B, n), and the
    number of terms the guard dropped. leave_one_out=False multiplies by the full g (the biased form; tests)."""
    n = U.shape[0]
    w = (F - F.mean(1, keepdim=True)) / mu
    h = w / mu
    norms = (U * U).sum(1)
    g = w @ U / (n - 1)
    s = ((n - 1) * (g @ U.T) - w * norms) / (n - 2) if leave_one_out else g @ U.T
    denominator = lam * (n - 1) + h * norms
    small = denominator.abs() < GUARD * lam * (n - 1)  # False for NaN: a diverged run is not counted as dropping
    c = torch.where(small, torch.zeros_like(h), h / torch.where(small, torch.ones_like(denominator), denominator))
    return (g - (c * s) @ U) / lam, int(small.sum())


def mean_baseline_gradient(U: torch.Tensor, F: torch.Tensor, mu: float) -> torch.Tensor:
    """g = 1/((n-1) mu) sum_i (f_i - fbar) u_i for each of B runs."""
    return ((F - F.mean(1, keepdim=True)) / mu) @ U / (U.shape[0] - 1)


def descend(f: Callable[[torch.Tensor], torch.Tensor], x0: torch.Tensor, lrs: torch.Tensor, *, kind: str,
            iterations: int, K: int, mu: float, lam: float = 0.1, histories: int = 0, generator: torch.Generator,
            record_every: int = 10) -> DescentResult:
    """Run `kind` from x0 (d,) with each step size of `lrs` (B,) for `iterations` steps."""
    if kind not in KINDS:
        raise ValueError(f"unknown zeroth-order method {kind!r} (known: {', '.join(KINDS)})")
    if kind == "zovh" and K * (histories + 1) < 3:
        raise ValueError("zovh's leave-one-out gradient needs at least 3 pairs")
    B, d = len(lrs), x0.numel()
    theta = x0.expand(B, d).clone()
    rounds: list[tuple[torch.Tensor, torch.Tensor]] = []
    steps, values, drops = [], [], 0
    started = time.perf_counter()
    for t in range(iterations + 1):
        if t % record_every == 0 or t == iterations:
            steps.append(t)
            values.append(f(theta))
        if t == iterations:
            break
        U = torch.randn(K, d, generator=generator, dtype=theta.dtype)
        F = f(theta[:, None, :] + mu * U)  # (B, K)
        if kind == "zo_sgd":
            direction = ((F - f(theta)[:, None]) / mu) @ U / K
        else:
            rounds = (rounds + [(U, F)])[-(histories + 1):]
            U_all, F_all = torch.cat([u for u, _ in rounds]), torch.cat([v for _, v in rounds], 1)
            if kind == "zoar":
                direction = mean_baseline_gradient(U_all, F_all, mu)
            else:
                direction, dropped = zovh_direction(U_all, F_all, mu, lam)
                drops += dropped
        theta = theta - lrs[:, None] * direction
    wall = time.perf_counter() - started
    return DescentResult(torch.tensor(steps), torch.stack(values, 1), values[-1],
                         K + 1 if kind == "zo_sgd" else K, wall, drops)
