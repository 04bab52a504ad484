"""Lattice-Boltzmann velocity sets (D2Q9, D3Q19, D3Q27) and the second-order equilibrium.

Axis convention used by the whole LBM package: the last spatial axis is vertical (z), the
first is streamwise (x); 3D grids are (x, y, z). Populations are stored direction-first,
[Q, *nodes], so a direction's field is one contiguous block.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cache

import numpy as np
import torch

CS2 = 1.0 / 3.0  # lattice speed of sound squared, for every set here


@dataclass(frozen=True)
class Lattice:
    """A velocity set: integer velocities c [Q, D], weights w [Q], opposite[i] with c[opposite[i]] = -c[i]."""

    name: str
    c: np.ndarray
    w: np.ndarray
    opposite: np.ndarray

    @property
    def q(self) -> int:
        return len(self.w)

    @property
    def dim(self) -> int:
        return self.c.shape[1]


def _velocity_set(name: str, dim: int, max_norm2: int, weight_by_norm2: dict[int, float]) -> Lattice:
    velocities = [v for v in itertools.product((0, 1, -1), repeat=dim) if sum(x * x for x in v) <= max_norm2]
    velocities.sort(key=lambda v: (sum(x * x for x in v), [-x for x in v]))  # rest first, then axes, ...
    c = np.array(velocities, dtype=np.int64)
    w = np.array([weight_by_norm2[int((v * v).sum())] for v in c])
    opposite = np.array([velocities.index(tuple(-x for x in v)) for v in velocities])
    return Lattice(name, c, w, opposite)


@cache
def get_lattice(name: str) -> Lattice:
    """The velocity set called `name` (D2Q9, D3Q19 or D3Q27)."""
    if name == "D2Q9":
        return _velocity_set(name, 2, 2, {0: 4 / 9, 1: 1 / 9, 2: 1 / 36})
    if name == "D3Q19":
        return _velocity_set(name, 3, 2, {0: 1 / 3, 1: 1 / 18, 2: 1 / 36})
    if name == "D3Q27":
        return _velocity_set(name, 3, 3, {0: 8 / 27, 1: 2 / 27, 2: 1 / 54, 3: 1 / 216})
    raise ValueError(f"lattice: must be one of D2Q9, D3Q19, D3Q27, got {name!r}")


@cache
def lattice_tensors(name: str, dtype: torch.dtype, device: torch.device | str) -> tuple[torch.Tensor, torch.Tensor]:
    """(c [Q, D], w [Q]) of lattice `name` as tensors, built once per dtype and device (rebuilding
    them from numpy on every boundary call was a third of a solver step)."""
    lattice = get_lattice(name)
    return (torch.as_tensor(lattice.c, dtype=dtype, device=device),
            torch.as_tensor(lattice.w, dtype=dtype, device=device))


def equilibrium(rho: torch.Tensor, u: torch.Tensor, lattice: Lattice) -> torch.Tensor:
    """f_eq [Q, *shape] from rho [*shape] and u [D, *shape]:
    w_i rho (1 + 3 c_i.u + 4.5 (c_i.u)^2 - 1.5 |u|^2)."""
    c, w = lattice_tensors(lattice.name, u.dtype, u.device)
    cu = torch.tensordot(c, u, dims=1)
    usq = (u * u).sum(0)
    view = (-1,) + (1,) * rho.dim()
    return w.view(view) * rho * (1 + 3 * cu + 4.5 * cu * cu - 1.5 * usq)


def moments(f: torch.Tensor, lattice: Lattice) -> tuple[torch.Tensor, torch.Tensor]:
    """Density [*shape] and velocity [D, *shape] of populations f [Q, *shape]."""
    c, _ = lattice_tensors(lattice.name, f.dtype, f.device)
    rho = f.sum(0)
    return rho, torch.tensordot(c.T, f, dims=1) / rho
