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


def equilibrium_moments(rho_j: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """m [M, N] from [rho; j] [1 + D, N]; into `out` when given (rho_j may be its first rows)."""
    dim = rho_j.shape[0] - 1
    m = torch.empty((1 + dim + len(_pairs(dim)), rho_j.shape[1]), dtype=rho_j.dtype, device=rho_j.device) \
        if out is None else out
    if m[:1 + dim].data_ptr() != rho_j.data_ptr():
        m[:1 + dim].copy_(rho_j)
    rho, j = m[0], m[1:1 + dim]
    for p, (a, b) in enumerate(_pairs(dim)):
        torch.mul(j[a], j[b], out=m[1 + dim + p])
        m[1 + dim + p].div_(rho)
    return m


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


@dataclass(frozen=True)
class CollisionBuffers:
    """Work arrays of `collide`, allocated once per run: a fresh [M, N] per step paid page faults
    (the first run in a process was a third slower)."""

    moments: torch.Tensor  # m [M, N]; its first 1 + D rows are [rho; j]
    linear_part: torch.Tensor | None  # A f [Q, N] for TRT / regularised

    @classmethod
    def allocate(cls, dim: int, q: int, nodes: int, collision: str, dtype: torch.dtype, device) -> CollisionBuffers:
        m = torch.empty((1 + dim + len(_pairs(dim)), nodes), dtype=dtype, device=device)
        return cls(m, None if collision == "bgk" else torch.empty((q, nodes), dtype=dtype, device=device))


def collide(f: torch.Tensor, operators: StepOperators, out: torch.Tensor,
            buffers: CollisionBuffers | None = None) -> torch.Tensor:
    """Post-collision populations into `out` [Q, N]; returns [rho; j] [1 + D, N] of f."""
    dim = operators.moments.shape[0] - 1
    if buffers is None:
        collision = "bgk" if isinstance(operators.linear, float) else "matrix"
        buffers = CollisionBuffers.allocate(dim, f.shape[0], f.shape[1], collision, f.dtype, f.device)
    rho_j = torch.matmul(operators.moments, f, out=buffers.moments[:1 + dim])
    m = equilibrium_moments(rho_j, out=buffers.moments)
    if isinstance(operators.linear, float):
        torch.addmm(f, operators.affine, m, beta=operators.linear, alpha=1.0, out=out)
    else:
        torch.addmm(torch.matmul(operators.linear, f, out=buffers.linear_part), operators.affine, m, out=out)
    return rho_j


def flat_offset(velocity, grid) -> int:
    """Shift of c_i in populations flattened over [B, *grid] (C order)."""
    strides = [int(np.prod(grid[a + 1:])) for a in range(len(grid))]
    return int(sum(int(v) * s for v, s in zip(velocity, strides)))


def stream(post: torch.Tensor, new: torch.Tensor, lattice: Lattice, periodic: bool = False) -> None:
    """new_i(x + c_i) = post_i(x) for populations viewed as [Q, B, *grid].

    Non-periodic: one contiguous copy per direction, shifted by c_i's flat offset. Nodes whose
    upstream neighbour lies outside the grid (faces) receive a value from another row or body;
    the solver overwrites every such face population with a boundary condition. (Nine strided
    slice copies cost 2.8 array copies.)
    """
    grid = post.shape[2:]
    q = post.shape[0]
    post_rows, new_rows = post.view(q, -1), new.view(q, -1)
    size = post_rows.shape[1]
    for i, velocity in enumerate(lattice.c):
        if periodic:
            new[i] = torch.roll(post[i], shifts=tuple(int(v) for v in velocity), dims=tuple(range(1, len(grid) + 1)))
            continue
        shift = flat_offset(velocity, grid)
        if shift >= 0:
            new_rows[i, shift:].copy_(post_rows[i, :size - shift])
        else:
            new_rows[i, :shift].copy_(post_rows[i, -shift:])
