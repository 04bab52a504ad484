"""The per-node LBM step as matrix products: moments, collision, streaming.

All three collision models are linear in the populations f and in the equilibrium moment
vector m = [rho, j_a, j_a j_b / rho (a <= b)]: f* = A f + B m. BGK (A = (1 - omega) I) then is a
single `addmm` pass over f, the cheapest form on a memory-bound CPU; TRT and regularised BGK
cost one extra [Q, Q] product.
Populations are flat, f [Q, N] (N = batch x nodes), for the products; streaming views them as
[Q, B, *grid].
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import torch

from .lattice import CS2, Lattice

TRT_MAGIC = 3.0 / 16.0  # Lambda = (tau+ - 1/2)(tau- - 1/2): walls at exactly half-way for Poiseuille


def _pairs(dim: int) -> list[tuple[int, int]]:
    return [(a, b) for a, b in itertools.combinations_with_replacement(range(dim), 2)]


def moment_matrix(lattice: Lattice) -> np.ndarray:
    """[1 + D, Q]: rows give rho and the momentum j = sum_i c_i f_i."""
    return np.vstack([np.ones(lattice.q), lattice.c.T.astype(float)])


def equilibrium_matrix(lattice: Lattice) -> np.ndarray:
    """E [Q, M] with f_eq = E m, m = [rho, j, j_a j_b / rho for a <= b] (M = 1 + D + D(D+1)/2)."""
    c, w = lattice.c.astype(float), lattice.w
    columns = [w, *(3 * w * c[:, a] for a in range(lattice.dim))]
    for a, b in _pairs(lattice.dim):
        multiplicity = 1.0 if a == b else 2.0
        columns.append(w * (4.5 * multiplicity * c[:, a] * c[:, b] - 1.5 * (a == b)))
    return np.stack(columns, axis=1)


def equilibrium_moments(rho_j: torch.Tensor) -> torch.Tensor:
    """m [M, N] from [rho; j] [1 + D, N]."""
    rho, j = rho_j[0], rho_j[1:]
    dim = j.shape[0]
    quadratic = [j[a] * j[b] / rho for a, b in _pairs(dim)]
    return torch.cat([rho_j, torch.stack(quadratic)], dim=0)


def trt_minus_rate(omega: float) -> float:
    """omega- of the two-relaxation-time model for a given omega+ and the magic parameter 3/16."""
    return 1.0 / (0.5 + TRT_MAGIC / (1.0 / omega - 0.5))


def collision_matrices(lattice: Lattice, omega: float, collision: str) -> tuple[np.ndarray | float, np.ndarray]:
    """(A, B) with f* = A f + B m. A is the scalar 1 - omega for BGK, else a [Q, Q] matrix."""
    eq = equilibrium_matrix(lattice)
    if collision == "bgk":
        return 1.0 - omega, omega * eq
    q = lattice.q
    if collision == "trt":
        swap = np.eye(q)[lattice.opposite]  # (swap f)_i = f_opposite(i)
        even, odd = (np.eye(q) + swap) / 2, (np.eye(q) - swap) / 2
        omega_minus = trt_minus_rate(omega)
        return np.eye(q) - omega * even - omega_minus * odd, (omega * even + omega_minus * odd) @ eq
    if collision == "regularized":
        # f* = f_eq + (1 - omega) H Pi_neq, Pi_neq = S f - G m (second moment minus its equilibrium)
        c, pairs = lattice.c.astype(float), _pairs(lattice.dim)
        second = np.stack([c[:, a] * c[:, b] for a, b in pairs])  # S [P, Q]
        second_eq = np.zeros((len(pairs), eq.shape[1]))  # G [P, M]: rho c_s^2 delta_ab + j_a j_b / rho
        for p, (a, b) in enumerate(pairs):
            second_eq[p, 0] = CS2 * (a == b)
            second_eq[p, 1 + lattice.dim + p] = 1.0
        hermite = np.stack([lattice.w * (1.0 if a == b else 2.0) * (c[:, a] * c[:, b] - CS2 * (a == b))
                            for a, b in pairs], axis=1) / (2 * CS2 * CS2)  # H [Q, P]
        return (1 - omega) * hermite @ second, eq - (1 - omega) * hermite @ second_eq
    raise ValueError(f"collision: must be one of bgk, trt, regularized, got {collision!r}")


@dataclass(frozen=True)
class StepOperators:
    """The constant matrices of one step, as tensors on the solver's device and dtype."""

    moments: torch.Tensor  # [1 + D, Q]
    linear: torch.Tensor | float  # A
    affine: torch.Tensor  # B [Q, M]

    @classmethod
    def build(cls, lattice: Lattice, omega: float, collision: str, dtype: torch.dtype, device) -> StepOperators:
        linear, affine = collision_matrices(lattice, omega, collision)
        as_tensor = lambda a: torch.as_tensor(a, dtype=dtype, device=device)
        return cls(as_tensor(moment_matrix(lattice)), linear if np.isscalar(linear) else as_tensor(linear),
                   as_tensor(affine))


def collide(f: torch.Tensor, operators: StepOperators, out: torch.Tensor) -> torch.Tensor:
    """Post-collision populations into `out` [Q, N]; returns [rho; j] [1 + D, N] of f."""
    rho_j = operators.moments @ f
    m = equilibrium_moments(rho_j)
    if isinstance(operators.linear, float):
        torch.addmm(f, operators.affine, m, beta=operators.linear, alpha=1.0, out=out)
    else:
        torch.addmm(operators.linear @ f, operators.affine, m, out=out)
    return rho_j


def _shift_slices(step: int, size: int) -> tuple[slice, slice]:
    """(destination, source) slices along one axis for a shift by step in {-1, 0, 1}."""
    if step == 1:
        return slice(1, size), slice(0, size - 1)
    if step == -1:
        return slice(0, size - 1), slice(1, size)
    return slice(None), slice(None)


def stream(post: torch.Tensor, new: torch.Tensor, lattice: Lattice, periodic: bool = False) -> None:
    """new_i(x + c_i) = post_i(x) for populations viewed as [Q, B, *grid].

    Non-periodic: nodes whose upstream neighbour lies outside the grid keep stale values; the
    solver overwrites every such face population with a boundary condition.
    """
    grid = post.shape[2:]
    for i, velocity in enumerate(lattice.c):
        if periodic:
            new[i] = torch.roll(post[i], shifts=tuple(int(v) for v in velocity), dims=tuple(range(1, len(grid) + 1)))
            continue
        pairs = [_shift_slices(int(v), n) for v, n in zip(velocity, grid)]
        new[i][(slice(None), *(d for d, _ in pairs))] = post[i][(slice(None), *(s for _, s in pairs))]
