"""One seed of the Hessian-error study: every estimator along every path at its query budgets.

Noise model (spec §3.7): f(x; xi) = f(x) + xi^T x with xi ~ N(0, noise_std^2 I), one xi per estimate shared by all
of its queries. Each (function, regime, estimator, budget) gets its own direction and noise streams, and a fresh
estimator, so zovh_reuse's buffer holds the pairs of the previous path points only. The first `reuse_histories`
points of a path are warm-up (the buffer fills); errors are recorded from the next point on.
"""
from __future__ import annotations

import time

import torch

from tasks.core.seeding import derive_seed
from tasks.zeroth.functions import TestFunction
from tasks.zeroth.hessian import estimator


def noisy(f, xi: torch.Tensor):
    return lambda X: f(X) + X @ xi


def path_errors(function: TestFunction, points: torch.Tensor, hessians: list[torch.Tensor], name: str, K: int,
                mu: float, noise_std: float, histories: int, seed: int) -> list[dict]:
    """Frobenius errors of estimator `name` at budget K along one path (warm-up points not recorded)."""
    directions = torch.Generator().manual_seed(derive_seed(seed, "directions"))
    noise = torch.Generator().manual_seed(derive_seed(seed, "noise"))
    estimate = estimator(name, histories)
    rows = []
    for index, (x, H) in enumerate(zip(points, hessians)):
        xi = noise_std * torch.randn(x.numel(), generator=noise, dtype=x.dtype)
        started = time.perf_counter()
        result = estimate(noisy(function.f, xi), x, K, directions, mu)
        elapsed = time.perf_counter() - started
        if index >= histories:
            rows.append({"point": index - histories, "frob_err": result.frobenius_error(H),
                         "rel_err": result.frobenius_error(H) / float(torch.linalg.matrix_norm(H)),
                         "n_queries": result.queries, "time_s": elapsed})
    return rows


def seed_study(functions: dict[str, TestFunction], paths: dict[tuple[str, str], torch.Tensor], estimators: list[str],
               K: int, queries_grid: list[int], mu: float, noise_std: float, histories: int, seed: int) -> list[dict]:
    """Rows (function, regime, estimator, K, point, frob_err, rel_err, n_queries, time_s) of one seed: every
    estimator at budget K on both regimes, and at each budget of `queries_grid` on R-near."""
    rows = []
    for (name, regime), points in paths.items():
        hessians = [functions[name].hessian(x) for x in points]  # torch autograd, exact
        budgets = [K] + ([q for q in queries_grid if q != K] if regime == "near" else [])
        for budget in budgets:
            for est in estimators:
                for row in path_errors(functions[name], points, hessians, est, budget, mu, noise_std, histories,
                                       derive_seed(seed, name, regime, est, budget)):
                    rows.append({"function": name, "regime": regime, "estimator": est, "K": budget, **row})
    return rows
