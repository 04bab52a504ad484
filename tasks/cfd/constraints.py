"""Constraint measures for shape optimisation (spec §3.4), differentiable in torch.

C1 displacement (|dP| <= delta_max), C2 x-components of dP fixed, C3 bottom control layer frozen
(projections below), C4 area / volume ratio (shoelace area of the ordered 2D contour, signed
volume of a closed 3D mesh).
"""
from __future__ import annotations

import torch

from .ffd import ControlLattice


def polygon_area(contour: torch.Tensor) -> torch.Tensor:
    """Signed shoelace area of the closed polygon contour[N, 2] (positive counter-clockwise)."""
    x, z = contour[:, 0], contour[:, 1]
    return 0.5 * (x * torch.roll(z, -1) - torch.roll(x, -1) * z).sum()


def mesh_volume(vertices: torch.Tensor, faces: torch.Tensor) -> torch.Tensor:
    """Signed volume (1/6) sum_f v0 . (v1 x v2) of a closed mesh (positive when faces point outward)."""
    v0, v1, v2 = vertices[faces[:, 0]], vertices[faces[:, 1]], vertices[faces[:, 2]]
    return (v0 * torch.linalg.cross(v1, v2)).sum() / 6


def displacement(original: torch.Tensor, deformed: torch.Tensor, length: float = 1.0) -> dict[str, torch.Tensor]:
    """Mean and max point displacement |X' - X| in units of `length`."""
    distance = (deformed - original).norm(dim=1) / length
    return {"mean": distance.mean(), "max": distance.max()}


def project_controls(dP: torch.Tensor, lattice: ControlLattice, delta_max: float, freeze_x: bool = True,
                     freeze_bottom: bool = True) -> torch.Tensor:
    """The projection of dP[C, D] onto C1-C3: x-components zeroed (C2), the bottom layer of control
    points (lowest index on the last, vertical axis) zeroed (C3), each control vector's norm clipped
    to delta_max (C1). A pure function: returns a new tensor."""
    if delta_max < 0:
        raise ValueError(f"delta_max: must be >= 0, got {delta_max}")
    out = dP.clone()
    if freeze_x:
        out[:, 0] = 0
    if freeze_bottom:
        out.view(*lattice.counts, lattice.dim)[..., 0, :] = 0
    norm = out.norm(dim=1, keepdim=True)
    return out * torch.clamp(delta_max / norm.clamp_min(1e-300), max=1.0)


def constraints_hold(dP: torch.Tensor, lattice: ControlLattice, delta_max: float, tol: float = 1e-9) -> bool:
    """C1-C3 as checks (C4 depends on the shape, see polygon_area / mesh_volume)."""
    bottom = dP.view(*lattice.counts, lattice.dim)[..., 0, :]
    return bool(dP.norm(dim=1).max() <= delta_max + tol and dP[:, 0].abs().max() <= tol
                and bottom.abs().max() <= tol)
