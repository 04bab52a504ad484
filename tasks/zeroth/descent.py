"""Zeroth-order descent, batched over B runs that share the direction draws (one run per step size of a grid), every
method at the same number of new function queries per iteration (the budget K):
- zo_sgd: the two-point gradient (1/(K-1)) sum_k (f_k - f(theta))/mu u_k on K-1 directions plus the centre;
- zoar: the mean-baseline gradient 1/((n-1) mu) sum_i (f_i - fbar) u_i on K new directions plus the buffer's;
- zovh: the curvature-aware step d ~ (lambda I + H_hat)^{-1} g_hat from ZoVH's mean-baseline queries (with reuse);
- s2, scd: the classical Hessian estimators plugged into the same step, d = (lambda I + H_hat)^{-1} g_hat with
  H_hat and g_hat from the same queries: S2 on K-1 directions plus the centre (g_hat: zo_sgd's), SCD on
  (K-1)//2 directions queried at theta +- mu u plus the centre (g_hat: central differences). Both H_hat are
  U^T diag(a) U + shift I, so (lambda + shift) I + U^T diag(a) U is solved by the matrix inversion lemma.
Every step is theta <- theta - eta * d.

The ZoVH direction (n pairs (u_i, f_i) in the buffer, fbar their mean, w_i = (f_i - fbar)/mu, h_i = w_i/mu):
  g = U^T w / (n-1);  s_i = ((n-1) u_i^T g - w_i ||u_i||^2) / (n-2)   (u_i^T of the leave-one-out gradient)
  c_i = h_i / (lambda (n-1) + h_i ||u_i||^2);  d = (g - U^T (c * s)) / lambda
i.e. Sherman-Morrison per rank-one piece, the sample in the Hessian term kept out of the gradient it multiplies.
A denominator with |.| < 1e-12 lambda (n-1) (possible where h_i < 0) drops its term; the drops are counted. The
S2 / SCD solve drops a run's step the same way when |lambda + shift| < 1e-12 lambda or its n x n system is singular.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import torch

Objective = Callable[[torch.Tensor], torch.Tensor]  # (..., d) -> (...)
KINDS = ("zo_sgd", "zoar", "zovh", "s2", "scd")
REUSING = ("zoar", "zovh")  # mean-baseline kinds: their (u, f) pairs stay valid across steps, so a buffer may keep them
GUARD = 1e-12


@dataclass
class DescentResult:
    """f along the run (B, len(steps)) at `steps`, the final f (B,), new queries per iteration, wall seconds,
    and how many terms (zovh) or steps (s2, scd) the denominator guard dropped."""

    steps: torch.Tensor
    values: torch.Tensor
    final: torch.Tensor
    queries_per_iteration: int
    wall_s: float
    guard_drops: int


def direction_count(kind: str, budget: int) -> int:
    """Directions one step of `kind` draws at `budget` new queries: the centre f(theta) costs zo_sgd, s2 and scd
    one query, and scd queries each direction twice."""
    if kind in REUSING:
        return budget
    return (budget - 1) // 2 if kind == "scd" else budget - 1


def queries_per_iteration(kind: str, budget: int) -> int:
    """New function queries per step: `budget` for every kind, except scd at an even budget (one fewer)."""
    return 2 * direction_count(kind, budget) + 1 if kind == "scd" else budget


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


def lowrank_solve(U: torch.Tensor, weights: torch.Tensor, diagonal: torch.Tensor, rhs: torch.Tensor,
                  floor: float) -> tuple[torch.Tensor, int]:
    """(c I + U^T diag(a) U)^{-1} r for each of B runs (U (n, d) shared; a (B, n), c (B,), r (B, d)) by the matrix
    inversion lemma (c I + U^T A U)^{-1} = (I - U^T (c I_n + A U U^T)^{-1} A U) / c: one n x n solve per run, no
    d x d matrix. A run whose |c| < floor or whose n x n system is singular gets a zero step and is counted."""
    n = U.shape[0]
    system = diagonal[:, None, None] * torch.eye(n, dtype=U.dtype) + weights[:, :, None] * (U @ U.T)
    z, info = torch.linalg.solve_ex(system, weights * (rhs @ U.T))
    small = (diagonal.abs() < floor) | (info != 0)  # False for NaN: a diverged run is not counted as dropping
    safe = torch.where(small, torch.ones_like(diagonal), diagonal)
    return torch.where(small[:, None], torch.zeros_like(rhs), (rhs - z @ U) / safe[:, None]), int(small.sum())


def preconditioned(U: torch.Tensor, weights: torch.Tensor, coefficients: torch.Tensor,
                   lam: float) -> tuple[torch.Tensor, int]:
    """(lambda I + H_hat)^{-1} g_hat for H_hat = U^T diag(a) U - (sum a) I (the "- I" of S2 and SCD) and
    g_hat = U^T y, a = `weights`, y = `coefficients`."""
    return lowrank_solve(U, weights, lam - weights.sum(1), coefficients @ U, GUARD * lam)


def centre_and_shifts(f: Objective, theta: torch.Tensor, U: torch.Tensor,
                      shifts: tuple[float, ...]) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """f(theta) (B,) and f(theta + s u_k) (B, m) for each s of `shifts`, in one batch of 1 + len(shifts) m queries."""
    points = torch.cat([theta[:, None, :]] + [theta[:, None, :] + s * U for s in shifts], 1)
    values = f(points)
    m = U.shape[0]
    return values[:, 0], [values[:, 1 + j * m:1 + (j + 1) * m] for j in range(len(shifts))]


def zo_sgd_step(f: Objective, theta: torch.Tensor, U: torch.Tensor, mu: float, lam: float) -> tuple[torch.Tensor, int]:
    centre, (F,) = centre_and_shifts(f, theta, U, (mu,))
    return ((F - centre[:, None]) / (mu * U.shape[0])) @ U, 0


def s2_step(f: Objective, theta: torch.Tensor, U: torch.Tensor, mu: float, lam: float) -> tuple[torch.Tensor, int]:
    """S2's H_hat = (1/(m mu^2)) sum_k (f_k - f(theta)) (u_k u_k^T - I) with zo_sgd's gradient, m directions."""
    centre, (F,) = centre_and_shifts(f, theta, U, (mu,))
    coefficients = (F - centre[:, None]) / (mu * U.shape[0])
    return preconditioned(U, coefficients / mu, coefficients, lam)


def scd_step(f: Objective, theta: torch.Tensor, U: torch.Tensor, mu: float, lam: float) -> tuple[torch.Tensor, int]:
    """SCD's H_hat = (1/(2 p mu^2)) sum_k (f(theta + mu u_k) + f(theta - mu u_k) - 2 f(theta)) (u_k u_k^T - I) with
    the central-difference gradient (1/(2 p mu)) sum_k (f(theta + mu u_k) - f(theta - mu u_k)) u_k, p directions."""
    centre, (plus, minus) = centre_and_shifts(f, theta, U, (mu, -mu))
    p = U.shape[0]
    weights = (plus + minus - 2 * centre[:, None]) / (2 * p * mu * mu)
    return preconditioned(U, weights, (plus - minus) / (2 * p * mu), lam)


CENTRED_STEPS = {"zo_sgd": zo_sgd_step, "s2": s2_step, "scd": scd_step}


def check_method(kind: str, K: int, histories: int) -> None:
    if kind not in KINDS:
        raise ValueError(f"unknown zeroth-order method {kind!r} (known: {', '.join(KINDS)})")
    if histories and kind not in REUSING:
        raise ValueError(f"{kind} cannot reuse queries (its baseline is f at the current point): histories must be 0")
    if direction_count(kind, K) < 1:
        raise ValueError(f"{kind} needs more than {K} queries per iteration for one direction")
    if kind == "zovh" and K * (histories + 1) < 3:
        raise ValueError("zovh's leave-one-out gradient needs at least 3 pairs")


def descend(f: Objective, x0: torch.Tensor, lrs: torch.Tensor, *, kind: str, iterations: int, K: int, mu: float,
            lam: float = 0.1, histories: int = 0, generator: torch.Generator, record_every: int = 10) -> DescentResult:
    """Run `kind` from x0 (d,) with each step size of `lrs` (B,) for `iterations` steps of K new queries each
    (besides them, f is evaluated at theta every `record_every` steps to record the run)."""
    check_method(kind, K, histories)
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
        U = torch.randn(direction_count(kind, K), d, generator=generator, dtype=theta.dtype)
        if kind in REUSING:
            rounds = (rounds + [(U, f(theta[:, None, :] + mu * U))])[-(histories + 1):]
            U_all, F_all = torch.cat([u for u, _ in rounds]), torch.cat([v for _, v in rounds], 1)
            direction, dropped = ((mean_baseline_gradient(U_all, F_all, mu), 0) if kind == "zoar"
                                  else zovh_direction(U_all, F_all, mu, lam))
        else:
            direction, dropped = CENTRED_STEPS[kind](f, theta, U, mu, lam)
        drops += dropped
        theta = theta - lrs[:, None] * direction
    wall = time.perf_counter() - started
    return DescentResult(torch.tensor(steps), torch.stack(values, 1), values[-1], queries_per_iteration(kind, K), wall,
                         drops)
