"""High-precision optima F* of the composite problems, with the solver and its tolerances recorded.

Network Lasso: cvxpy with Clarabel (interior point; gap and feasibility tolerances 1e-9), SCS (eps 1e-9) as the fallback.
Lasso: scikit-learn's coordinate descent (tol 1e-14), cross-checked by cvxpy/Clarabel.
"""
from __future__ import annotations

import time

import numpy as np

CLARABEL_TOLERANCES = {"tol_gap_abs": 1e-9, "tol_gap_rel": 1e-9, "tol_feas": 1e-9, "max_iter": 500}
SCS_TOLERANCES = {"eps_abs": 1e-9, "eps_rel": 1e-9, "max_iters": 200_000}


def _solve(problem, variable) -> dict:
    import cvxpy as cp

    started = time.perf_counter()
    for solver, options in ((cp.CLARABEL, CLARABEL_TOLERANCES), (cp.SCS, SCS_TOLERANCES)):
        try:
            problem.solve(solver=solver, **options)
        except cp.error.SolverError:
            continue
        if problem.status == cp.OPTIMAL:
            return {"x": np.asarray(variable.value), "solver": solver, "tolerances": options, "status": problem.status,
                    "solve_s": time.perf_counter() - started}
    raise RuntimeError(f"no solver reached an optimal status (last: {problem.status})")


def network_lasso_optimum(X: np.ndarray, y: np.ndarray, edges: np.ndarray, lam: float) -> dict:
    """argmin sum_i 1/2 ||X_i x_i - y_i||^2 + lam sum_(i,j) ||x_i - x_j||_2 by cvxpy."""
    import cvxpy as cp

    N, _, p = X.shape
    x = cp.Variable((N, p))
    loss = sum(0.5 * cp.sum_squares(X[i] @ x[i] - y[i]) for i in range(N))
    incidence = np.zeros((len(edges), N))
    incidence[np.arange(len(edges)), edges[:, 0]], incidence[np.arange(len(edges)), edges[:, 1]] = 1.0, -1.0
    penalty = lam * cp.sum(cp.norm(incidence @ x, 2, axis=1)) if len(edges) else 0
    return _solve(cp.Problem(cp.Minimize(loss + penalty)), x)


def lasso_optimum(X: np.ndarray, y: np.ndarray, lam: float) -> dict:
    """argmin 1/(2n) ||X x - y||^2 + lam ||x||_1 by scikit-learn's Lasso (the same scaling)."""
    from sklearn.linear_model import Lasso

    started = time.perf_counter()
    model = Lasso(alpha=lam, fit_intercept=False, tol=1e-14, max_iter=1_000_000).fit(X, y)
    return {"x": model.coef_.copy(), "solver": "sklearn.linear_model.Lasso", "tolerances": {"tol": 1e-14},
            "status": "converged" if model.n_iter_ < 1_000_000 else "max_iter", "solve_s": time.perf_counter() - started}


def lasso_optimum_cvxpy(X: np.ndarray, y: np.ndarray, lam: float) -> dict:
    import cvxpy as cp

    x = cp.Variable(X.shape[1])
    return _solve(cp.Problem(cp.Minimize(cp.sum_squares(X @ x - y) / (2 * len(y)) + lam * cp.norm1(x))), x)
