"""The optimizer specs' synthetic problems: numpy data generators (float64) and torch losses.

Heterogeneous quadratics, matrix least squares (identity or log-uniform input scales), hinge SVM with an exact LP
optimum (interpolated and noisy), nonsmooth Rosenbrock.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch

NS_ROSENBROCK_START = (-1.5, 2.0)
INPUT_SCALES = ("identity", "log_uniform")


def _log_uniform(rng: np.random.Generator, low: float, high: float, size: int) -> np.ndarray:
    if not 0 < low <= high:
        raise ValueError(f"log-uniform range: needs 0 < low <= high, got ({low!r}, {high!r})")
    return np.exp(rng.uniform(np.log(low), np.log(high), size))


# ---------------------------------------------------------------- quad-het

def quadratic_heterogeneous(d: int, h_range: tuple[float, float] = (1e-2, 1.0), seed: int = 0) -> dict:
    """Curvatures h log-uniform in h_range and a start x0 ~ N(0, I), both of dimension d."""
    if d < 1:
        raise ValueError(f"d: must be >= 1, got {d!r}")
    rng = np.random.default_rng(seed)
    h = _log_uniform(rng, *h_range, d)
    return {"h": h, "x0": rng.standard_normal(d)}


@dataclass(frozen=True)
class QuadraticProblem:
    """f(x) = 0.5 sum h x^2; `loss` adds a fresh noise . x term per call, so its autograd gradient is
    h x + noise_std N(0, I) (the spec's stochastic gradient)."""

    h: torch.Tensor
    noise_std: float = 0.01

    def full_loss(self, x: torch.Tensor) -> torch.Tensor:
        return 0.5 * (self.h.to(x) * x * x).sum()

    def loss(self, x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        noise = torch.randn(x.shape, generator=generator, dtype=x.dtype).to(x.device)
        return self.full_loss(x) + self.noise_std * (noise * x).sum()


# ---------------------------------------------------------------- matrix least squares

def matrix_least_squares(m: int, n: int, n_samples: int, sigma: float,
                         input_scales: Literal["identity", "log_uniform"], seed: int) -> dict:
    """Data of min_W (1/N) sum_i 0.5 ||W x_i - y_i||^2 with W in R^{m x n}.

    W* ~ N(0, 1/n) entrywise; x_i ~ N(0, diag(s)) with s = 1 ("identity") or s
    log-uniform in [1e-2, 1] ("log_uniform"; s is the variance per input
    direction); y_i = W* x_i + sigma n_i. Returns X [N, n], Y [N, m], W_star [m, n], scales [n].
    """
    if input_scales not in INPUT_SCALES:
        raise ValueError(f"input_scales: must be one of {INPUT_SCALES}, got {input_scales!r}")
    for name, value in (("m", m), ("n", n), ("n_samples", n_samples)):
        if value < 1:
            raise ValueError(f"{name}: must be >= 1, got {value!r}")
    if sigma < 0:
        raise ValueError(f"sigma: must be >= 0, got {sigma!r}")
    rng = np.random.default_rng(seed)
    w_star = rng.standard_normal((m, n)) / np.sqrt(n)
    scales = np.ones(n) if input_scales == "identity" else _log_uniform(rng, 1e-2, 1.0, n)
    x = rng.standard_normal((n_samples, n)) * np.sqrt(scales)
    y = x @ w_star.T + sigma * rng.standard_normal((n_samples, m))
    return {"X": x, "Y": y, "W_star": w_star, "scales": scales}


def mls_loss(W: torch.Tensor, X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
    """mean_i 0.5 ||W x_i - y_i||^2 over the rows of X [N, n] and Y [N, m]."""
    return 0.5 * ((X @ W.T - Y) ** 2).sum(dim=1).mean()


# ---------------------------------------------------------------- hinge SVM

def hinge_losses(A: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Per-sample max(0, 1 - b_i a_i^T x)."""
    return np.maximum(0.0, 1.0 - b * (A @ x))


def hinge_subgradients(A: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Per-sample subgradients [n, d]: -b_i a_i where b_i a_i^T x <= 1 (the kink included, as the
    reference code does), else 0."""
    active = b * (A @ x) <= 1.0
    return -(active * b)[:, None] * A


def hinge_optimum(A: np.ndarray, b: np.ndarray) -> dict:
    """Exact min_x mean_i max(0, 1 - b_i a_i^T x) by the LP over (x, s): minimise mean(s) subject to
    s_i >= 1 - b_i a_i^T x, s >= 0 (scipy linprog, HiGHS). Returns f_star, x_star, lp_status."""
    from scipy import sparse
    from scipy.optimize import linprog

    n, d = A.shape
    cost = np.concatenate([np.zeros(d), np.full(n, 1.0 / n)])
    constraints = sparse.hstack([sparse.csr_matrix(-b[:, None] * A), -sparse.identity(n)], format="csr")
    bounds = [(None, None)] * d + [(0, None)] * n
    result = linprog(cost, A_ub=constraints, b_ub=-np.ones(n), bounds=bounds, method="highs")
    if result.status != 0:
        raise RuntimeError(f"hinge LP did not solve to optimality: status {result.status}, {result.message}")
    return {"f_star": float(result.fun), "x_star": result.x[:d], "lp_status": int(result.status)}


def svm_interpolated(seed: int) -> dict:
    """Interpolated hinge SVM (the notebook recipe): n 300, d 100, A = randn + 2, b = randn + 2, x0 = randn."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((300, 100)) + 2
    b = rng.standard_normal(300) + 2
    x0 = rng.standard_normal(100)
    return {"A": A, "b": b, "x0": x0, **hinge_optimum(A, b)}


def svm_noisy(seed: int, flip_fraction: float = 0.1) -> dict:
    """Noisy hinge SVM: n 500, d 50, A = randn, b = sign(A x_true) with round(10%) labels flipped, x0 = 0."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((500, 50))
    x_true = rng.standard_normal(50)
    b = np.where(A @ x_true >= 0, 1.0, -1.0)
    flipped = rng.choice(500, size=round(flip_fraction * 500), replace=False)
    b[flipped] *= -1
    return {"A": A, "b": b, "x0": np.zeros(50), **hinge_optimum(A, b)}


# ---------------------------------------------------------------- nonsmooth Rosenbrock

def ns_rosenbrock(xy: torch.Tensor) -> torch.Tensor:
    """f(x, y) = 10 |y - x^2| + |1 - x| over the last axis of xy (minimum 0 at (1, 1))."""
    x, y = xy[..., 0], xy[..., 1]
    return 10 * (y - x**2).abs() + (1 - x).abs()
