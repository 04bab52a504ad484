"""CFD verification of optimised shapes (spec §3.4 "verify", §6.3 C2).

A deformed shape is voxelised by the FFD inverse composed with the base shape's exact inside
test (tasks.cfd.ffd.DeformedInside) or, for a user's mesh with no analytic inside test, by a
point-in-polygon test on its deformed silhouette, and run by the caller with EXACTLY the data
set's LBMSetup and Placement. Its Cd is computed with the BASE shape's reference area, so a ratio
of Cds is a ratio of drag forces; the Cd with the shape's own A_ref is reported as well.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from shapely import Polygon, contains_xy

from .ffd import ControlLattice, DeformedInside
from .lbm_setup import Body
from .vehicle_dataset import PlacedInside, Placement, tunnel_body
from .vehicles import Vehicle


@dataclass(frozen=True)
class PolygonInside:
    """Picklable point-in-polygon test of a closed contour [n, 2] (body units)."""

    contour: np.ndarray

    def __call__(self, points: np.ndarray) -> np.ndarray:
        points = np.asarray(points)
        return contains_xy(Polygon(self.contour), points[:, 0], points[:, 1])


def deformed_vehicle_body(vehicle: Vehicle, lattice: ControlLattice, dP: np.ndarray, placement: Placement) -> Body:
    """The LBM body of `vehicle` deformed by dP, with the base vehicle's A_ref and profile range."""
    inside = DeformedInside(vehicle.inside, lattice, torch.as_tensor(dP, dtype=torch.float64))
    return tunnel_body(vehicle, placement, inside=inside)


def contour_body(contour: np.ndarray, a_ref: float, placement: Placement) -> Body:
    """The LBM body of a closed silhouette (point-in-polygon voxelisation) with reference height a_ref."""
    length = placement.length_cells
    return Body(PlacedInside(PolygonInside(np.asarray(contour)), placement), reference_area=a_ref * length,
                profile_x_range=(placement.x_front, placement.x_front + length))


def verified_outcome(cd_base: float, cd_opt: float, a_ref_ratio: float, constraints_hold: bool) -> dict:
    """cd_base, cd_opt: LBM Cd of base and optimised shape, BOTH with the base A_ref (drag force in
    base units); a_ref_ratio = A_ref(opt) / A_ref(base). Success: force reduced and C1-C4 hold."""
    if not cd_base > 0 or not a_ref_ratio > 0:
        raise ValueError(f"cd_base and a_ref_ratio: must be > 0, got {cd_base!r}, {a_ref_ratio!r}")
    reduction = (cd_base - cd_opt) / cd_base
    cd_own = cd_opt / a_ref_ratio
    return {"cd_base": float(cd_base), "cd_opt": float(cd_opt), "cd_opt_own_aref": float(cd_own),
            "verified_reduction": float(reduction), "verified_reduction_own_aref": float((cd_base - cd_own) / cd_base),
            "constraints_hold": bool(constraints_hold), "success": bool(reduction > 0 and constraints_hold)}
