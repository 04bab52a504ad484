"""The curvature-aware descent study: one (function, method, seed) over the whole step-size grid (batched), and
the pick of each method's best step by the median over seeds of f(x_T)/f(x_0) (each function's minimum is 0)."""
from __future__ import annotations

import math
import time

import numpy as np
import torch

from tasks.zeroth.descent import descend
from tasks.zeroth.functions import OPTIMISATION_FUNCTIONS

from .params import Method, Optimisation


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
