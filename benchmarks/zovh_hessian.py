"""Zeroth-order Hessian estimators: error per query and per second, in one run, against ZoVH.

The quadratic of the ZoVH study (A = Q diag(linspace(1, 10, d)) Q^T, b ~ N(0, I)) at R-near points x* + 0.1 N(0, I),
noise f + xi^T x with xi ~ N(0, 1e-3^2 I); K = 3 new queries per estimate; d in (50, 150, 300). Per estimator:
mean ||H_hat - H||_F over ESTIMATES estimates, queries used, the median seconds per estimate (estimate only, the
error is not timed; the median resists a shared machine's stalls), error x queries (lower is better per query),
error x seconds, the estimate's storage (low-rank: (n + 1) d floats; the dense d x d it stands for), and each as a
ratio to ZoVH's. ZoVH-reuse is called at one fixed point, so its buffer holds pairs of that point. One torch thread.

Run: `python -m benchmarks.zovh_hessian` (JSON -> benchmarks/results/zovh_hessian.json).
"""
from __future__ import annotations

import time

import numpy as np
import torch

from tasks.zeroth.functions import quadratic, random_quadratic
from tasks.zeroth.hessian import NAMES, estimator

from .common import write_result

SIZES, K, MU, NOISE, ESTIMATES = (50, 150, 300), 3, 0.1, 1e-3, 40


def measure(d: int) -> dict:
    generator = torch.Generator().manual_seed(d)
    A, b = random_quadratic(d, generator)
    f = quadratic(A, b)
    x = torch.linalg.solve(A, -b) + 0.1 * torch.randn(d, generator=generator, dtype=torch.float64)
    rows = {}
    for name in NAMES:
        make, errors, seconds, queries, stored = estimator(name), [], [], 0, 0
        for _ in range(ESTIMATES):
            xi = NOISE * torch.randn(d, generator=generator, dtype=torch.float64)
            started = time.perf_counter()
            result = make(lambda X: f(X) + X @ xi, x, K, generator, MU)
            seconds.append(time.perf_counter() - started)
            errors.append(result.frobenius_error(A))
            queries, stored = result.queries, (result.U.shape[0] + 1) * d
        error, per_estimate = float(np.mean(errors)), float(np.median(seconds))
        rows[name] = {"mean_frob_err": error, "queries": queries, "seconds_per_estimate": per_estimate,
                      "error_x_queries": error * queries, "error_x_seconds": error * per_estimate,
                      "stored_floats": stored, "dense_floats": d * d}
    base = rows["zovh"]
    for row in rows.values():
        row["vs_zovh"] = {key: row[key] / base[key] for key in ("mean_frob_err", "error_x_queries",
                                                               "seconds_per_estimate", "error_x_seconds")}
    return rows


def main() -> dict:
    torch.set_num_threads(1)
    result = {"K": K, "mu": MU, "noise_std": NOISE, "estimates": ESTIMATES,
              "by_d": {str(d): measure(d) for d in SIZES}}
    write_result("zovh_hessian", result)
    return result


if __name__ == "__main__":
    import json

    print(json.dumps({d: {n: round(r["vs_zovh"]["error_x_queries"], 2) for n, r in rows.items()}
                      for d, rows in main()["by_d"].items()}))
