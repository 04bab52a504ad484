"""Sampling time-averaged LBM fields: interpolation from fluid nodes only, surface Cp, volume samples.

Solid nodes hold stale populations, so every interpolation drops non-fluid corners and
renormalises the remaining multilinear weights (what makes surface-pressure and Delta-p checks
work on a staircase body).
"""
from __future__ import annotations

import itertools

import numpy as np

from .lattice import CS2
from .lbm_setup import LBMResult


def fluid_nodes(result: LBMResult) -> np.ndarray:
    """[B, *grid] bool: nodes whose averaged fields are valid fluid values (not body, not wall)."""
    fluid = ~result.solid
    for row in result.wall_rows:
        fluid[..., row] = False
    return fluid


def interpolate_fluid(field: np.ndarray, fluid: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Multilinear interpolation of field [*grid] at points [N, D] (lattice coordinates) using only
    corners where fluid [*grid] is true; NaN where a point has no fluid corner."""
    grid = np.array(field.shape)
    points = np.clip(np.asarray(points, dtype=float), 0, grid - 1)
    base = np.minimum(np.floor(points).astype(int), grid - 2)
    frac = points - base
    total, weight_sum = np.zeros(len(points)), np.zeros(len(points))
    for corner in itertools.product((0, 1), repeat=field.ndim):
        node = tuple((base + np.array(corner)).T)
        weight = np.prod(np.where(np.array(corner) == 1, frac, 1 - frac), axis=1) * fluid[node]
        total += weight * field[node]
        weight_sum += weight
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(weight_sum > 0, total / weight_sum, np.nan)


def pressure_coefficient(rho: np.ndarray, u_ref: float) -> np.ndarray:
    """Cp = (p - p_inf) / (0.5 rho_inf U^2) with p = c_s^2 rho and rho_inf = 1."""
    return CS2 * (np.asarray(rho) - 1.0) / (0.5 * u_ref**2)


def surface_cp(rho_mean: np.ndarray, fluid: np.ndarray, points: np.ndarray, normals: np.ndarray, u_ref: float,
               offset: float = 1.0) -> np.ndarray:
    """Cp at surface points [N, D] from rho sampled `offset` cells out along the unit normals [N, D]."""
    return pressure_coefficient(interpolate_fluid(rho_mean, fluid, points + offset * normals), u_ref)


def volume_samples(rho_mean: np.ndarray, u_mean: np.ndarray, fluid: np.ndarray, low: np.ndarray, high: np.ndarray,
                   count: int, u_ref: float, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """`count` distinct fluid nodes drawn uniformly from the box [low, high] (lattice coordinates):
    points [n, D], velocity u / U_ref [n, D] and Cp [n] (fewer than count if the box holds fewer)."""
    axes = [np.arange(max(int(np.ceil(lo)), 0), min(int(np.floor(hi)), n - 1) + 1)
            for lo, hi, n in zip(low, high, fluid.shape)]
    grid = np.meshgrid(*axes, indexing="ij")
    candidates = np.stack([g.ravel() for g in grid], axis=1)
    candidates = candidates[fluid[tuple(candidates.T)]]
    chosen = candidates[rng.choice(len(candidates), size=min(count, len(candidates)), replace=False)]
    node = tuple(chosen.T)
    return {"points": chosen.astype(float), "velocity": np.moveaxis(u_mean[(slice(None), *node)], 0, -1) / u_ref,
            "cp": pressure_coefficient(rho_mean[node], u_ref)}
