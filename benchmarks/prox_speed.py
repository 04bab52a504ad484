"""Stochastic proximal iterations per second against cvxpy's solve time on the same problem, at three sizes.

The network Lasso of the companion generator scaled by its groups (N = 25, 75, 150 nodes; p = 20 features + bias,
15 rows per node, lambda = 1): RIP iterations per second (one run, and 15 runs batched as the pipeline batches its
(seed, c) grid), cvxpy/Clarabel's solve time (the pipeline's reference, tolerances 1e-9), and the gap the last
iterate reaches in cvxpy's time. Also the diabetes Lasso: Prox-SGD iterations per second against scikit-learn's
coordinate descent at tol 1e-14 and cvxpy. One torch thread.

Run: `python -m benchmarks.prox_speed` (JSON -> benchmarks/results/prox_speed.json).
"""
from __future__ import annotations

import time

import numpy as np
import torch
from sklearn.datasets import load_diabetes

from tasks.prox.problems import Lasso, NetworkLasso, network_lasso_data
from tasks.prox.reference import lasso_optimum, lasso_optimum_cvxpy, network_lasso_optimum
from tasks.prox.stochastic import horizon_step, run_prox

from .common import write_result

SCALES = {25: (5, 5, 5, 5, 5), 75: (10, 17, 18, 18, 12), 150: (20, 34, 36, 36, 24)}
ITERATIONS = 3000


def iterations_per_second(problem, T: int, batch: int, c: float = 0.3) -> tuple[float, torch.Tensor]:
    gammas = torch.full((batch,), horizon_step(c, problem.smoothness, T), dtype=torch.float64)
    run = run_prox(problem, gammas, T, torch.Generator().manual_seed(0), record_points=2)
    return T / run.wall_s, run.last


def network(N: int) -> dict:
    data = network_lasso_data(SCALES[N], 20, 15, np.random.default_rng(0))
    problem = NetworkLasso(torch.from_numpy(data["X"]), torch.from_numpy(data["y"]), torch.from_numpy(data["edges"]), 1.0)
    reference = network_lasso_optimum(data["X"], data["y"], data["edges"], 1.0)
    f_star = float(problem.value(torch.from_numpy(reference["x"])[None])[0])
    single, last = iterations_per_second(problem, ITERATIONS, 1)
    batched, _ = iterations_per_second(problem, ITERATIONS, 15)
    in_solver_time = max(int(single * reference["solve_s"]), 10)
    _, reached = iterations_per_second(problem, in_solver_time, 1)
    return {"nodes": N, "edges": len(data["edges"]), "rip_iterations_per_s": single,
            "rip_run_iterations_per_s_batched_15": 15 * batched, "cvxpy_solve_s": reference["solve_s"],
            "cvxpy_solver": str(reference["solver"]), "rip_iterations_in_cvxpy_time": in_solver_time,
            "gap_after_cvxpy_time": float(problem.value(reached)[0]) - f_star,
            "seconds_per_rip_iteration_over_cvxpy_solve": (1 / single) / reference["solve_s"]}


def lasso() -> dict:
    X, y = load_diabetes(return_X_y=True)
    X, y = (X - X.mean(0)) / X.std(0), (y - y.mean()) / y.std()
    lam = 0.1 * float(np.abs(X.T @ y).max()) / len(y)
    problem = Lasso(torch.from_numpy(X), torch.from_numpy(y), lam)
    single, _ = iterations_per_second(problem, ITERATIONS, 1)
    started = time.perf_counter()
    lasso_optimum(X, y, lam)
    sklearn_s = time.perf_counter() - started
    cvxpy_s = lasso_optimum_cvxpy(X, y, lam)["solve_s"]
    return {"prox_sgd_iterations_per_s": single, "sklearn_solve_s": sklearn_s, "cvxpy_solve_s": cvxpy_s,
            "prox_sgd_iterations_in_sklearn_time": single * sklearn_s, "prox_sgd_iterations_in_cvxpy_time": single * cvxpy_s}


def main() -> dict:
    torch.set_num_threads(1)
    result = {"iterations": ITERATIONS, "network_lasso": [network(N) for N in SCALES], "lasso_diabetes": lasso()}
    write_result("prox_speed", result)
    return result


if __name__ == "__main__":
    import json

    print(json.dumps(main(), indent=1, default=str))
