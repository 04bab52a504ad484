"""Test objectives with known minima. Each evaluates one point or a batch (leading axes) at once.

- Rayleigh quotient on the sphere: f(x) = -x^T A x / 2, minimum -lam_max / 2 at the leading eigenvector.
- Karcher mean on SPD(n), affine-invariant metric: f(X) = (1/2m) sum_i ||logm(X^-1/2 S_i X^-1/2)||_F^2, its
  minimiser found by the fixed-point iteration.
- Squared distance on the simplex: f(x) = ||x - c||^2 / 2 with c inside, so f* = 0.
- Active-subspace nonconvex: f(x) = g(A^T x), g(z) = sum_i z_i^2 / 2 + cos(3 z_i) / 3 (L = 4), A orthonormal d x k.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def rayleigh_matrix(n: int, rng: np.random.Generator, gap: float = 0.1) -> np.ndarray:
    """A = Q diag(lam) Q^T, lam ~ U(0, 1) sorted with lam_max = 1 and lam_2 = 1 - gap."""
    lam = np.sort(rng.uniform(0, 1, n))[::-1]
    lam[0], lam[1] = 1.0, 1.0 - gap
    lam[2:] = np.minimum(lam[2:], 1.0 - gap)
    q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    return (q * lam) @ q.T


@dataclass(frozen=True)
class Rayleigh:
    A: np.ndarray

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return -0.5 * np.einsum("...i,ij,...j->...", x, self.A, x)

    def euclidean_gradient(self, x: np.ndarray) -> np.ndarray:
        return -x @ self.A

    @property
    def minimum(self) -> float:
        return -0.5 * float(np.linalg.eigvalsh(self.A)[-1])


def spd_samples(n: int, m: int, rng: np.random.Generator, low: float = 0.45, high: float = 2.2) -> np.ndarray:
    """m SPD matrices Q_i diag(exp(U(log low, log high))) Q_i^T, shape (m, n, n)."""
    q, _ = np.linalg.qr(rng.standard_normal((m, n, n)))
    lam = np.exp(rng.uniform(np.log(low), np.log(high), (m, n)))
    return np.einsum("mij,mj,mkj->mik", q, lam, q)


def _sym_fun(matrices: np.ndarray, fun) -> np.ndarray:
    """fun applied to the eigenvalues of symmetric matrices (..., n, n)."""
    lam, vec = np.linalg.eigh(matrices)
    return np.einsum("...ij,...j,...kj->...ik", vec, fun(lam), vec)


@dataclass(frozen=True)
class KarcherCost:
    S: np.ndarray  # (m, n, n)

    def __call__(self, X: np.ndarray) -> np.ndarray:
        # logm(X^-1/2 S X^-1/2) has the eigenvalues of log(L^-1 S L^-T), L the Cholesky factor of X
        L = np.linalg.cholesky(0.5 * (X + np.swapaxes(X, -1, -2)))
        Linv = np.linalg.inv(L)[..., None, :, :]
        lam = np.linalg.eigvalsh(Linv @ self.S @ np.swapaxes(Linv, -1, -2))
        return 0.5 * np.mean(np.sum(np.log(lam) ** 2, axis=-1), axis=-1)

    def whitened_logs(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(X^1/2, X^-1/2, mean_i logm(X^-1/2 S_i X^-1/2)) of one point X."""
        half, inv_half = _sym_fun(X, np.sqrt), _sym_fun(X, lambda lam: 1 / np.sqrt(lam))
        return half, inv_half, np.mean(_sym_fun(inv_half @ self.S @ inv_half, np.log), axis=0)

    def riemannian_gradient(self, X: np.ndarray) -> np.ndarray:
        half, _, mean_log = self.whitened_logs(X)
        return -half @ mean_log @ half

    def euclidean_gradient(self, X: np.ndarray) -> np.ndarray:
        """X^-1 (Riemannian gradient) X^-1: pymanopt's SPD manifold maps it back to the Riemannian one."""
        _, inv_half, mean_log = self.whitened_logs(X)
        return -inv_half @ mean_log @ inv_half


def karcher_mean(S: np.ndarray, tol: float = 1e-12, max_iterations: int = 1000) -> tuple[np.ndarray, float, int]:
    """The fixed-point iteration X <- X^1/2 expm(mean_i logm(X^-1/2 S_i X^-1/2)) X^1/2 from the identity, until the
    residual ||mean_i logm(...)||_F < tol. Returns (X, residual, iterations)."""
    cost = KarcherCost(S)
    X = np.eye(S.shape[-1])
    for iteration in range(1, max_iterations + 1):
        half, _, mean_log = cost.whitened_logs(X)
        residual = float(np.linalg.norm(mean_log))
        if residual < tol:
            return X, residual, iteration - 1
        X = half @ _sym_fun(mean_log, np.exp) @ half
        X = 0.5 * (X + X.T)
    return X, residual, max_iterations


@dataclass(frozen=True)
class SquaredDistance:
    c: np.ndarray

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return 0.5 * np.sum((x - self.c) ** 2, axis=-1)


@dataclass(frozen=True)
class ActiveSubspace:
    """f(x) = g(A^T x) with g(z) = sum z^2/2 + cos(3z)/3: nonconvex (g'' = 1 - 3 cos 3z), L = 4, grad g = z - sin 3z."""

    A: np.ndarray  # (d, k) orthonormal columns, or one per chain (chains, d, k) for a batch of instances

    def __call__(self, x: np.ndarray) -> np.ndarray:
        z = self.reduced(x)
        return np.sum(0.5 * z**2 + np.cos(3 * z) / 3, axis=-1)

    def reduced(self, x: np.ndarray) -> np.ndarray:
        """z = A^T x (per chain when A is stacked)."""
        return x @ self.A if self.A.ndim == 2 else np.einsum("...cd,cdk->...ck", x, self.A)

    def grad_norm(self, x: np.ndarray) -> np.ndarray:
        """||grad f(x)|| = ||grad g(A^T x)|| (A has orthonormal columns): a diagnostic, never fed to a method."""
        z = self.reduced(x)
        return np.linalg.norm(z - np.sin(3 * z), axis=-1)


def orthonormal_columns(d: int, k: int, rng: np.random.Generator) -> np.ndarray:
    return np.linalg.qr(rng.standard_normal((d, k)))[0]
