"""The experiment recipes of zovh's stages: one seed of the Hessian-error study, every estimator along every path at
its query budgets; one (function, method, seed) of the curvature-aware descent study over the whole step-size grid
(batched), and the pick of each method's best step by the median over seeds of f(x_T)/f(x_0) (each function's
minimum is 0).

Noise model of the Hessian study (spec §3.7): f(x; xi) = f(x) + xi^T x with xi ~ N(0, noise_std^2 I), one xi per
estimate shared by all of its queries. Each (function, regime, estimator, budget) gets its own direction and noise
streams, and a fresh estimator, so zovh_reuse's buffer holds the pairs of the previous path points only. The first
`reuse_histories` points of a path are warm-up (the buffer fills); errors are recorded from the next point on.
"""
from __future__ import annotations

import math
import time

import numpy as np
import torch

from tasks.core.seeding import derive_seed
from tasks.zeroth.descent import descend
from tasks.zeroth.functions import OPTIMISATION_FUNCTIONS, TestFunction
from tasks.zeroth.hessian import estimator

from .params import Method, Optimisation

# ---------------------------------------------------------------- the Hessian-error study

def noisy(f, xi: torch.Tensor):
    return lambda X: f(X) + X @ xi


class PathRun:
    """One estimator at one budget K along one path: its own direction and noise streams and a fresh estimator (so
    zovh_reuse's buffer holds this path's pairs only); `visit` each point in path order."""

    def __init__(self, function: TestFunction, name: str, K: int, mu: float, noise_std: float, histories: int,
                 seed: int):
        self.function, self.K, self.mu, self.noise_std, self.histories = function, K, mu, noise_std, histories
        self.directions = torch.Generator().manual_seed(derive_seed(seed, "directions"))
        self.noise = torch.Generator().manual_seed(derive_seed(seed, "noise"))
        self.estimate = estimator(name, histories)
        self.rows: list[dict] = []

    def visit(self, index: int, x: torch.Tensor, H: torch.Tensor, H_norm: float) -> None:
        """Estimate at path point `index`; its Frobenius error is recorded after the warm-up points."""
        xi = self.noise_std * torch.randn(x.numel(), generator=self.noise, dtype=x.dtype)
        started = time.perf_counter()
        result = self.estimate(noisy(self.function.f, xi), x, self.K, self.directions, self.mu)
        elapsed = time.perf_counter() - started
        if index >= self.histories:
            error = result.frobenius_error(H)
            self.rows.append({"point": index - self.histories, "frob_err": error, "rel_err": error / H_norm,
                              "n_queries": result.queries, "time_s": elapsed})


def seed_study(functions: dict[str, TestFunction], paths: dict[tuple[str, str], torch.Tensor], estimators: list[str],
               K: int, queries_grid: list[int], mu: float, noise_std: float, histories: int, seed: int) -> list[dict]:
    """Rows (function, regime, estimator, K, point, frob_err, rel_err, n_queries, time_s) of one seed: every
    estimator at budget K on both regimes, and at each budget of `queries_grid` on R-near. The points of a path are
    the outer loop, so that one exact Hessian is held at a time (200 MB at d = 5000) whatever the path's length."""
    rows = []
    for (name, regime), points in paths.items():
        budgets = [K] + ([q for q in queries_grid if q != K] if regime == "near" else [])
        runs = {(budget, est): PathRun(functions[name], est, budget, mu, noise_std, histories,
                                       derive_seed(seed, name, regime, est, budget))
                for budget in budgets for est in estimators}
        for index, x in enumerate(points):
            H = functions[name].hessian(x)  # torch autograd, exact
            H_norm = float(torch.linalg.matrix_norm(H))
            for run in runs.values():
                run.visit(index, x, H, H_norm)
        rows += [{"function": name, "regime": regime, "estimator": est, "K": budget, **row}
                 for (budget, est), run in runs.items() for row in run.rows]
    return rows


# ---------------------------------------------------------------- the descent study

def run_method(o: Optimisation, function: str, method: Method, x0: torch.Tensor, seed: int) -> dict:
    f = OPTIMISATION_FUNCTIONS[function]
    result = descend(f, x0, torch.tensor(o.lrs, dtype=torch.float64), kind=method.kind, iterations=o.iterations,
                     K=o.K, mu=o.mu, lam=o.lam, histories=method.histories,
                     generator=torch.Generator().manual_seed(seed), record_every=o.record_every)
    values = result.values.numpy()
    ratio = values[:, -1] / values[:, 0]
    return {"steps": result.steps.numpy(), "values": values, "final_ratio": np.where(np.isfinite(ratio), ratio, np.inf),
            "queries_per_iteration": result.queries_per_iteration, "wall_per_iteration_s": result.wall_s / o.iterations,
            "guard_drops": result.guard_drops}


def best_lr(lrs: list[float], ratios_by_seed: np.ndarray) -> tuple[float, float]:
    """(best lr, its median final ratio) over a (seeds, lrs) array; ties go to the smaller lr; a diverged run
    counts as +inf."""
    medians = np.median(np.where(np.isfinite(ratios_by_seed), ratios_by_seed, np.inf), axis=0)
    k = int(np.argmin(medians))
    return lrs[k], float(medians[k]) if math.isfinite(medians[k]) else math.inf


def time_methods(o: Optimisation, function: str, x0: torch.Tensor, seed: int, iterations: int = 100,
                 repeats: int = 3) -> dict[str, float]:
    """Seconds per iteration of each method on the whole lr grid, measured back to back in one process, the methods
    interleaved and the best of `repeats` kept: the controlled timing C5 compares (the solve runs' own wall times
    come from concurrent worker processes on a shared machine)."""
    f, lrs = OPTIMISATION_FUNCTIONS[function], torch.tensor(o.lrs, dtype=torch.float64)
    best = {m.name: math.inf for m in o.methods}
    for _ in range(repeats):
        for m in o.methods:
            started = time.perf_counter()
            descend(f, x0, lrs, kind=m.kind, iterations=iterations, K=o.K, mu=o.mu, lam=o.lam, histories=m.histories,
                    generator=torch.Generator().manual_seed(seed), record_every=iterations)
            best[m.name] = min(best[m.name], (time.perf_counter() - started) / iterations)
    return best
