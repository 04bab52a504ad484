"""The synthetic matrix problem L(A, B) = 1/2 ||W0 + A B - T||_F^2 (the balanced-LoRA paper's Fig. 3 setting):
factor descent with or without balancing after each step, and the conditioning of its minimisers.

Runs are batched over a leading dimension (one learning rate per batch row), in float64.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from .balance import VARIANTS

SIGN_EPS = 1e-8  # memoryless sign descent: g / (|g| + eps), the paper code's "Adam" with beta1 = beta2 = 0


def residual(T, W0, A, B):
    return W0 + A @ B - T


def loss(T, W0, A, B) -> torch.Tensor:
    return 0.5 * residual(T, W0, A, B).square().sum(dim=(-2, -1))


def optimal_loss(T: torch.Tensor, W0: torch.Tensor, r: int) -> float:
    """1/2 sum_{i > r} sigma_i(T - W0)^2 (Eckart-Young)."""
    sigma = torch.linalg.svdvals(T - W0)
    return float(0.5 * sigma[r:].square().sum())


@dataclass(frozen=True)
class Descent:
    """steps of `optimizer` ("sign" or "gd") with step lr * decay**t; `balancing` after each step: None (LoRA),
    "svd" or "aligned" (BaLoRA)."""

    steps: int
    optimizer: str = "sign"
    balancing: str | None = None
    decay: float = 1.0


def _project_finite(project, A, B):
    """Balance the rows whose factors are finite; a row whose SVD fails (overflowing factors of a diverging lr)
    becomes NaN, so its run counts as diverged."""
    finite = torch.isfinite(A).all(dim=(-2, -1)) & torch.isfinite(B).all(dim=(-2, -1))
    A, B = A.clone(), B.clone()
    A[~finite] = float("nan")
    try:
        A[finite], B[finite] = project(A[finite], B[finite])
    except torch.linalg.LinAlgError:
        for i in finite.nonzero().flatten().tolist():
            try:
                A[i], B[i] = project(A[i], B[i])
            except torch.linalg.LinAlgError:
                A[i] = float("nan")
    return A, B


def factor_descent(T, W0, A0, B0, lrs: torch.Tensor, descent: Descent):
    """One run per learning rate from (A0, B0): losses [n_lrs, steps + 1] (inf once a run is non-finite) and the
    final factors [n_lrs, a, r], [n_lrs, r, b]."""
    n = len(lrs)
    A, B = A0.expand(n, *A0.shape).clone(), B0.expand(n, *B0.shape).clone()
    step_size = lrs.to(A.dtype)[:, None, None]
    project = VARIANTS[descent.balancing] if descent.balancing else None
    losses = [loss(T, W0, A, B)]
    for t in range(descent.steps):
        R = residual(T, W0, A, B)
        gA, gB = R @ B.mT, A.mT @ R
        if descent.optimizer == "sign":
            gA, gB = gA / (gA.abs() + SIGN_EPS), gB / (gB.abs() + SIGN_EPS)
        eta = step_size * descent.decay ** t
        A, B = A - eta * gA, B - eta * gB
        if project is not None:  # after the step, never before the first one (the zero-product saddle)
            A, B = _project_finite(project, A, B)
        losses.append(loss(T, W0, A, B))
    losses = torch.stack(losses, dim=1)
    bad = ~torch.isfinite(losses)
    losses[bad.cummax(dim=1).values] = float("inf")
    return losses, A, B


def hessian(T, W0, A, B) -> torch.Tensor:
    """The exact Hessian of L w.r.t. (vec A, vec B), [(a + b) r] squared (float64)."""
    a, r = A.shape

    def f(x):
        return loss(T, W0, x[: a * r].reshape(a, r), x[a * r:].reshape(r, -1))

    x = torch.cat([A.reshape(-1), B.reshape(-1)]).to(torch.float64)
    return torch.autograd.functional.hessian(f, x)


def condition_number(eigenvalues: torch.Tensor, r: int) -> float:
    """lambda_max / lambda_{r^2 + 1}: the r^2 smallest (zero at a minimiser: the GL(r) invariance) discarded."""
    ascending = torch.sort(eigenvalues).values
    return float(ascending[-1] / ascending[r * r])


def balanced_condition_number(T, W0, r: int) -> float:
    """Closed form at the balanced global minimiser: 2 sigma_1 / (sigma_r - sigma_{r+1}), sigma of T - W0."""
    sigma = torch.linalg.svdvals(T - W0)
    return float(2 * sigma[0] / (sigma[r - 1] - sigma[r]))
