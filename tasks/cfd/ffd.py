"""Free-form deformation (Sederberg & Parry 1986) as a linear map X' = X + Phi dP (spec §3.4).

The control lattice spans the shape's bounding box enlarged by 5% (about its centre); a point's
weights are tensor products of Bernstein polynomials of its local coordinates in [0, 1]^D.
Points outside the box take the weights of the nearest box point (local coordinates clamped),
so the deformation of space stays continuous and rows of Phi still sum to 1.
Control points are indexed in C order over the lattice axes (x first, z last in 2D).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from math import comb

import numpy as np
import torch

DEFAULT_COUNTS = {2: (8, 4), 3: (8, 4, 4)}  # control points per axis: x by z, x by y by z


@dataclass(frozen=True)
class ControlLattice:
    """lower/upper corners of the control box (D floats) and control points per axis (each >= 2)."""

    lower: tuple[float, ...]
    upper: tuple[float, ...]
    counts: tuple[int, ...]

    def __post_init__(self):
        if not len(self.lower) == len(self.upper) == len(self.counts):
            raise ValueError(f"ControlLattice: lower, upper, counts must have one entry per axis, got "
                             f"{self.lower}, {self.upper}, {self.counts}")
        if any(c < 2 for c in self.counts):
            raise ValueError(f"ControlLattice.counts: every axis needs >= 2 control points, got {self.counts}")
        if any(u <= lo for lo, u in zip(self.lower, self.upper)):
            raise ValueError(f"ControlLattice: upper must exceed lower on every axis, got "
                             f"{self.lower}, {self.upper}")

    @property
    def dim(self) -> int:
        return len(self.counts)

    @property
    def size(self) -> int:
        """Number of control points."""
        out = 1
        for c in self.counts:
            out *= c
        return out


def lattice_around(points: torch.Tensor, counts: tuple[int, ...] | None = None,
                   margin: float = 0.05) -> ControlLattice:
    """The lattice on the bounding box of points[N, D], every extent enlarged by `margin` (fraction)."""
    lo, hi = points.min(0).values.double(), points.max(0).values.double()
    centre, half = (lo + hi) / 2, (hi - lo) * (1 + margin) / 2
    return ControlLattice(tuple((centre - half).tolist()), tuple((centre + half).tolist()),
                   tuple(counts or DEFAULT_COUNTS[points.shape[1]]))


def bernstein(degree: int, t: torch.Tensor) -> torch.Tensor:
    """[..., degree + 1]: B_i(t) = C(degree, i) t^i (1 - t)^(degree - i)."""
    i = torch.arange(degree + 1, dtype=t.dtype, device=t.device)
    binomial = torch.tensor([comb(degree, k) for k in range(degree + 1)], dtype=t.dtype, device=t.device)
    t = t.unsqueeze(-1)
    return binomial * t ** i * (1 - t) ** (degree - i)


def local_coordinates(lattice: ControlLattice, points: torch.Tensor) -> torch.Tensor:
    lower = torch.tensor(lattice.lower, dtype=points.dtype, device=points.device)
    upper = torch.tensor(lattice.upper, dtype=points.dtype, device=points.device)
    return ((points - lower) / (upper - lower)).clamp(0, 1)


def weight_matrix(lattice: ControlLattice, points: torch.Tensor) -> torch.Tensor:
    """Phi[N, lattice.size]: the Bernstein weight of every control point at every point."""
    if points.shape[1] != lattice.dim:
        raise ValueError(f"points: expected [N, {lattice.dim}] for this lattice, got {list(points.shape)}")
    local = local_coordinates(lattice, points)
    phi = torch.ones(points.shape[0], 1, dtype=points.dtype, device=points.device)
    for axis, count in enumerate(lattice.counts):  # C order: the last axis varies fastest
        phi = (phi.unsqueeze(-1) * bernstein(count - 1, local[:, axis]).unsqueeze(1)).reshape(points.shape[0], -1)
    return phi


def deform(points: torch.Tensor, phi: torch.Tensor, dP: torch.Tensor) -> torch.Tensor:
    """X' = X + Phi dP for points[N, D], phi[N, C], control displacements dP[C, D] (differentiable)."""
    return points + phi @ dP


def invert(deformed: torch.Tensor, lattice: ControlLattice, dP: torch.Tensor, iterations: int = 100,
           tol: float = 1e-10) -> torch.Tensor:
    """The X with X + Phi(X) dP = deformed, by the fixed-point iteration X <- Y - Phi(X) dP.

    It converges when the displacement field is a contraction (Lipschitz < 1), i.e. control
    displacements small against the lattice spacing, which the constraint delta_max ensures.
    """
    x = deformed.clone()
    for _ in range(iterations):
        step = deformed - weight_matrix(lattice, x) @ dP
        converged = (step - x).abs().max() <= tol
        x = step
        if converged:
            break
    return x


@dataclass(frozen=True)
class DeformedInside:
    """Inside test of the deformed shape: the original `inside` (numpy points -> bool) composed
    with the FFD inverse. Picklable, so LBM workers can voxelise with it."""

    inside: Callable[[np.ndarray], np.ndarray]
    lattice: ControlLattice
    dP: torch.Tensor

    def __call__(self, points: np.ndarray) -> np.ndarray:
        original = invert(torch.as_tensor(np.asarray(points), dtype=self.dP.dtype), self.lattice, self.dP)
        return self.inside(original.numpy())
