"""UniDrag's data set: vehicles placed in the LBM tunnel, their labels, summary and splits (spec §3.1, §6.2).

Placement (our choice): body length L cells, the nose at x = front_lengths * L cells, the road
(the half-way ground wall) at z = 0.5, so a body point (x, z) in units of L sits at lattice
(x_front + L x, 0.5 + L z). Labels per shape: Cd with A_ref = h_ref L cells, the K-bin drag
build-up profile, surface samples (points, outward normals, Cp), volume samples (points, u/U,
Cp) and the Cd trace; every point in body units (L = 1, nose at x = 0, road at z = 0).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tasks.core.seeding import derive_seed

from .fields import fluid_nodes, surface_cp, volume_samples
from .lbm_setup import Body, LBMResult
from .vehicles import BODY_TYPES, Vehicle

ROAD_Z = 0.5  # the half-way ground wall between wall row 0 and the first fluid row
VOLUME_BOX = ((-0.5, 0.0), (2.5, 1.0))  # (x, z) low and high corners in units of L (spec §3.1)


@dataclass(frozen=True)
class Placement:
    """Where a body sits in the tunnel: length in cells and the nose's lattice x."""

    length_cells: int
    x_front: float

    def to_lattice(self, points: np.ndarray) -> np.ndarray:
        return np.asarray(points) * self.length_cells + np.array([self.x_front, ROAD_Z])

    def to_body(self, points: np.ndarray) -> np.ndarray:
        return (np.asarray(points) - np.array([self.x_front, ROAD_Z])) / self.length_cells


@dataclass(frozen=True)
class PlacedInside:
    """Picklable lattice-coordinate inside test of a body-unit inside function."""

    inside: object  # points [N, 2] in body units -> bool [N]
    placement: Placement

    def __call__(self, points: np.ndarray) -> np.ndarray:
        return self.inside(self.placement.to_body(points))


def tunnel_body(vehicle: Vehicle, placement: Placement, inside=None) -> Body:
    """The LBM body of `vehicle` (or of `inside`, e.g. its FFD-deformed test, with the base
    vehicle's reference area and profile range)."""
    length = placement.length_cells
    return Body(PlacedInside(inside or vehicle.inside, placement), reference_area=vehicle.h_ref * length,
                profile_x_range=(placement.x_front, placement.x_front + length))


def convergence_drift(trace: np.ndarray, window: int) -> float:
    """|Cd(last window) - Cd(previous window)| / |Cd(last window)| of a per-step Cd trace."""
    last, previous = trace[-window:].mean(), trace[-2 * window:-window].mean()
    return float(abs(last - previous) / abs(last))


def labels(result: LBMResult, b: int, vehicle: Vehicle, placement: Placement, surface_count: int,
           volume_count: int, seed: int) -> dict[str, np.ndarray]:
    """The labels of body b of a batch result (arrays for one npz file)."""
    u_ref, length = result.setup.u_lat, placement.length_cells
    fluid = fluid_nodes(result)[b]
    points, normals = vehicle.contour(surface_count)
    cp_surface = surface_cp(result.rho_mean[b], fluid, placement.to_lattice(points), normals, u_ref)
    low, high = placement.to_lattice(np.array(VOLUME_BOX))
    volume = volume_samples(result.rho_mean[b], result.u_mean[b], fluid, low, high, volume_count, u_ref,
                            np.random.default_rng(seed))
    trace = result.coefficient_trace[:, b]
    return {"cd": np.float64(result.cd[b]), "cl": np.float64(result.cl[b]), "profile": result.drag_profile[b],
            "a_ref": np.float64(vehicle.h_ref), "a_ref_cells": np.float64(vehicle.h_ref * length),
            "surface_points": points, "surface_normals": normals, "surface_cp": cp_surface,
            "volume_points": placement.to_body(volume["points"]), "volume_u": volume["velocity"],
            "volume_cp": volume["cp"], "cd_trace": trace[:, 0], "cl_trace": trace[:, -1],
            "drift": np.float64(convergence_drift(trace[:, 0], result.setup.average_steps)),
            "diverged": np.bool_(result.diverged[b])}


def count_nonfinite(record: dict[str, np.ndarray]) -> int:
    return int(sum(np.size(v) - np.isfinite(v).sum() for v in record.values() if np.asarray(v).dtype.kind == "f"))


def splits(body_types: list[str], per_type: dict[str, int], seed: int) -> dict[str, list[int]]:
    """Shape indices per split, stratified by body type: per_type = {'train': n, 'val': n, 'test': n}
    shapes of every type, drawn by a seeded permutation of that type's indices."""
    out = {name: [] for name in per_type}
    for body_type in BODY_TYPES:
        members = [i for i, t in enumerate(body_types) if t == body_type]
        if len(members) != sum(per_type.values()):
            raise ValueError(f"splits: {body_type} has {len(members)} shapes, the split sizes {per_type} "
                             f"need {sum(per_type.values())}")
        order = np.random.default_rng(derive_seed(seed, "split", body_type)).permutation(members)
        start = 0
        for name, count in per_type.items():
            out[name] += sorted(int(i) for i in order[start:start + count])
            start += count
    return {name: sorted(indices) for name, indices in out.items()}
