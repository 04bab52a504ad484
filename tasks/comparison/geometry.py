"""Manifolds for the dueling methods: pymanopt's sphere, SPD and Stiefel manifolds (exp, log, norm, tangent
projection come from pymanopt), plus the flat probability simplex, which pymanopt does not have.

What is ours on top of pymanopt is what the dueling methods need and pymanopt does not give:
- `gaussian_tangent` / `unit_tangent`: a direction uniform on the unit sphere of T_x M in the Riemannian metric
  (on SPD drawn in whitened coordinates X^-1/2 V X^-1/2, as the affine-invariant metric requires; pymanopt's
  random_tangent_vector uses the global numpy RNG and, on SPD, is not isotropic in that metric);
- `to_manifold`: the map of an ambient point back onto M, used only by the Euclidean baseline (counted, so a
  projection-free method can show it made none);
- on the simplex, the linear minimisation oracle of Frank-Wolfe.
"""
from __future__ import annotations

import numpy as np
from pymanopt.manifolds import Sphere, Stiefel, SymmetricPositiveDefinite

MANIFOLDS = ("sphere", "spd", "stiefel", "simplex")


def _sym(a: np.ndarray) -> np.ndarray:
    return 0.5 * (a + np.swapaxes(a, -1, -2))


class Geometry:
    """A manifold of intrinsic dimension `dim` whose points have `shape`."""

    name: str
    dim: int
    shape: tuple[int, ...]

    def __init__(self) -> None:
        self.projections = 0  # calls of to_manifold

    def gaussian_tangent(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        raise NotImplementedError

    def unit_tangent(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        v = self.gaussian_tangent(x, rng)
        return v / self.norm(x, v)

    def norm(self, x: np.ndarray, v: np.ndarray) -> float:
        raise NotImplementedError

    def exp(self, x: np.ndarray, v: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def to_manifold(self, y: np.ndarray) -> np.ndarray:
        self.projections += 1
        return self._to_manifold(y)

    def _to_manifold(self, y: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def contains(self, x: np.ndarray, tol: float = 1e-10) -> bool:
        raise NotImplementedError


class PymanoptGeometry(Geometry):
    """Exp, log, norm and tangent projection from a pymanopt manifold."""

    def __init__(self, manifold) -> None:
        super().__init__()
        self.manifold = manifold
        self.dim = int(manifold.dim)

    def norm(self, x, v):
        return float(self.manifold.norm(x, v))

    def exp(self, x, v):
        return self.manifold.exp(x, v)

    def log(self, x, y):
        return self.manifold.log(x, y)

    def project_tangent(self, x, z):
        return self.manifold.projection(x, z)


class SphereGeometry(PymanoptGeometry):
    name = "sphere"

    def __init__(self, n: int) -> None:
        super().__init__(Sphere(n))
        self.shape = (n,)

    def gaussian_tangent(self, x, rng):
        return self.project_tangent(x, rng.standard_normal(self.shape))

    def _to_manifold(self, y):
        return y / np.linalg.norm(y, axis=-1, keepdims=True)

    def contains(self, x, tol=1e-10):
        return bool(abs(np.linalg.norm(x) - 1) < tol)


class SPDGeometry(PymanoptGeometry):
    """SPD(n) with the affine-invariant metric <U, V>_X = tr(X^-1 U X^-1 V)."""

    name = "spd"

    def __init__(self, n: int, floor: float = 1e-8) -> None:
        super().__init__(SymmetricPositiveDefinite(n))
        self.shape, self.floor = (n, n), floor

    def gaussian_tangent(self, x, rng):
        # W symmetric with an isotropic Gaussian law for the Frobenius product, then V = X^1/2 W X^1/2, so that
        # X^-1/2 V X^-1/2 = W: isotropic in the affine-invariant metric
        n = self.shape[0]
        W = _sym(rng.standard_normal((n, n)))
        lam, vec = np.linalg.eigh(x)
        half = (vec * np.sqrt(lam)) @ vec.T
        return half @ W @ half

    def exp(self, x, v):
        # X^1/2 expm(X^-1/2 V X^-1/2) X^1/2 by symmetric eigendecompositions: the same map as pymanopt's exp
        # (X expm(X^-1 V), a general matrix exponential; tested equal) at a twentieth of its cost
        lam, vec = np.linalg.eigh(x)
        half, inv_half = (vec * np.sqrt(lam)) @ vec.T, (vec / np.sqrt(lam)) @ vec.T
        mu, w = np.linalg.eigh(_sym(inv_half @ v @ inv_half))
        return _sym(half @ ((w * np.exp(mu)) @ w.T) @ half)

    def _to_manifold(self, y):
        lam, vec = np.linalg.eigh(_sym(y))
        return (vec * np.maximum(lam, self.floor)) @ np.swapaxes(vec, -1, -2)

    def contains(self, x, tol=1e-10):
        return bool(np.allclose(x, x.T, atol=tol) and np.linalg.eigvalsh(x)[0] > 0)


class StiefelGeometry(PymanoptGeometry):
    """St(n, p): n x p matrices with orthonormal columns, the embedded metric."""

    name = "stiefel"

    def __init__(self, n: int, p: int) -> None:
        super().__init__(Stiefel(n, p))
        self.shape = (n, p)

    def gaussian_tangent(self, x, rng):
        return self.project_tangent(x, rng.standard_normal(self.shape))

    def _to_manifold(self, y):
        u, _, vt = np.linalg.svd(y, full_matrices=False)
        return u @ vt

    def contains(self, x, tol=1e-10):
        return bool(np.allclose(x.T @ x, np.eye(self.shape[1]), atol=tol))


class SimplexGeometry(Geometry):
    """The probability simplex as a flat manifold: tangent vectors sum to zero, Exp_x(v) = x + v, Log_x(z) = z - x."""

    name = "simplex"

    def __init__(self, n: int) -> None:
        super().__init__()
        self.shape, self.dim = (n,), n - 1

    def gaussian_tangent(self, x, rng):
        z = rng.standard_normal(self.shape)
        return z - z.mean()

    def unit_tangents(self, rng: np.random.Generator, count: int) -> np.ndarray:
        """`count` unit zero-sum directions at once, shape (count, n) (the tangent space is the same everywhere)."""
        z = rng.standard_normal((count, *self.shape))
        z -= z.mean(axis=1, keepdims=True)
        return z / np.linalg.norm(z, axis=1, keepdims=True)

    def norm(self, x, v):
        return float(np.linalg.norm(v))

    def exp(self, x, v):
        return x + v

    def log(self, x, z):
        return z - x

    def lmo(self, x: np.ndarray, g: np.ndarray) -> np.ndarray:
        """argmin over the simplex of <g, Log_x(z)> = <g, z> - <g, x>: the vertex e_j, j = argmin g_j."""
        vertex = np.zeros(self.shape)
        vertex[int(np.argmin(g))] = 1.0
        return vertex

    def _to_manifold(self, y):
        # Euclidean projection onto the simplex (sort-based); the projection-free method never calls it
        u = np.sort(y)[::-1]
        cumulative = np.cumsum(u) - 1
        rho = np.nonzero(u - cumulative / np.arange(1, len(u) + 1) > 0)[0][-1]
        return np.maximum(y - cumulative[rho] / (rho + 1), 0)

    def contains(self, x, tol=1e-12):
        return bool(abs(x.sum() - 1) < tol and x.min() >= -1e-15)


def make_geometry(name: str, dim: int, stiefel_p: int = 2) -> Geometry:
    """The manifold `name` with points of size `dim`: S^{dim-1}; SPD(dim); St(dim, stiefel_p); the simplex in R^dim."""
    if name == "sphere":
        return SphereGeometry(dim)
    if name == "spd":
        return SPDGeometry(dim)
    if name == "stiefel":
        return StiefelGeometry(dim, stiefel_p)
    if name == "simplex":
        return SimplexGeometry(dim)
    raise ValueError(f"manifold: must be one of {', '.join(MANIFOLDS)}, got {name!r}")
