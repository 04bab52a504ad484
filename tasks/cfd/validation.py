"""Solver validation cases against published reference values.

Schafer & Turek (1996) benchmark: channel 2.2 x 0.41, cylinder D = 0.1 at (0.2, 0.2), parabolic
inflow, nu = 1e-3. Re = U_mean D / nu: Re 20 is the steady case 2D-1, Re 100 the periodic case
2D-2. Sphere: steady drag at low Re against the Schiller-Naumann correlation
Cd = 24/Re (1 + 0.15 Re^0.687) (Clift, Grace & Weber 1978; within ~5% of data for Re < 800).
"""
from __future__ import annotations

import math

import numpy as np

from .engines import engine_of, run_lbm
from .fields import fluid_nodes, interpolate_fluid
from .lattice import CS2
from .lbm_setup import Body, LBMResult, LBMSetup

SCHAFER_TUREK = {
    20: {"cd_mean": 5.5795, "cl_max": 0.0106, "dp": 0.1175, "recirculation_length": 0.0846},
    100: {"cd_max": 3.23, "cl_max": 1.00, "strouhal": 0.300},  # centres of 3.22-3.24, 0.99-1.01, 0.295-0.305
}
STEADY_REYNOLDS_LIMIT = 47  # the cylinder wake sheds vortices above Re ~ 47
SHEDDING_AMPLITUDE = 0.05  # peak-to-peak Cl below this is not shedding (acoustic noise at Re 20 is ~1e-3)


class Disc:
    """Picklable inside test of a disc (2D) or ball (3D) in lattice coordinates."""

    def __init__(self, centre: tuple[float, ...], diameter: float):
        self.centre, self.radius = np.asarray(centre, dtype=float), diameter / 2

    def __call__(self, points: np.ndarray) -> np.ndarray:
        return ((points - self.centre) ** 2).sum(axis=1) <= self.radius**2


def cylinder_channel(diameter_cells: int) -> tuple[tuple[int, int], tuple[float, float]]:
    """Grid (NX, NZ) and cylinder centre of the Schafer-Turek channel at D cells: 22 D by 4.1 D
    fluid rows between wall rows 0 and NZ-1 (half-way walls at z = 0.5, NZ - 1.5)."""
    return (22 * diameter_cells, round(4.1 * diameter_cells) + 2), (2.0 * diameter_cells, 0.5 + 2.0 * diameter_cells)


def default_steps(re: float, diameter_cells: int) -> int:
    """10k steps at D = 10 for the steady case (spec 6.1), 4x that for vortex shedding."""
    return (1000 if re < STEADY_REYNOLDS_LIMIT else 4000) * diameter_cells


def strouhal_number(lift: np.ndarray, diameter: float, speed: float) -> float | None:
    """f D / U from upward zero crossings of the lift trace (one value per step); None without shedding."""
    centred = lift - lift.mean()
    if np.ptp(lift) < SHEDDING_AMPLITUDE:
        return None
    up = np.nonzero((centred[:-1] < 0) & (centred[1:] >= 0))[0]
    if len(up) < 3:
        return None
    crossings = up + centred[up] / (centred[up] - centred[up + 1])  # linear interpolation in time
    period = (crossings[-1] - crossings[0]) / (len(crossings) - 1)
    return diameter / (period * speed)


def recirculation_end(u_x_line: np.ndarray, x: np.ndarray) -> float:
    """x where the centre-line u_x turns from negative back to >= 0 behind the body; x[0] if the
    wake has no reverse flow."""
    negative = np.nonzero(u_x_line < 0)[0]
    if len(negative) == 0:
        return float(x[0])
    after = np.nonzero((np.arange(len(x)) > negative[0]) & (u_x_line >= 0))[0]
    if len(after) == 0:
        return float(x[-1])
    k = after[0]
    return float(x[k - 1] + (x[k] - x[k - 1]) * -u_x_line[k - 1] / (u_x_line[k] - u_x_line[k - 1]))


def cylinder_metrics(result: LBMResult, diameter_cells: int, re: float, u_mean: float) -> dict:
    """Schafer-Turek quantities in the benchmark's physical units (rho = 1, U_mean = Re nu / D)."""
    _, (xc, zc) = cylinder_channel(diameter_cells)
    window = result.coefficient_trace[-result.setup.average_steps:, 0]
    fluid = fluid_nodes(result)[0]
    front_rear = np.array([[xc - diameter_cells / 2, zc], [xc + diameter_cells / 2, zc]])
    rho_front, rho_rear = interpolate_fluid(result.rho_mean[0], fluid, front_rear)
    u_mean_physical = re * 1e-3 / 0.1
    dp = CS2 * (rho_front - rho_rear) / u_mean**2 * u_mean_physical**2
    x = np.arange(xc + diameter_cells / 2, result.rho_mean.shape[1] - 2, 0.05)
    u_line = interpolate_fluid(result.u_mean[0, 0], fluid, np.stack([x, np.full_like(x, zc)], axis=1))
    length = (recirculation_end(np.nan_to_num(u_line), x) - x[0]) / diameter_cells * 0.1
    strouhal = strouhal_number(window[:, 1], diameter_cells, u_mean)
    return {"cd_mean": float(window[:, 0].mean()), "cd_max": float(window[:, 0].max()),
            "cl_mean": float(window[:, 1].mean()), "cl_max": float(window[:, 1].max()), "dp": float(dp),
            "recirculation_length": float(length) if strouhal is None else None,
            "strouhal": None if strouhal is None else float(strouhal)}


def schafer_turek_cylinder(re: float = 20, diameter_cells: int = 10, steps: int | None = None,
                           bounce_back: str = "halfway", collision: str = "bgk", u_max: float = 0.1,
                           dtype: str = "float32", device: str = "cpu", engine: str = "auto") -> dict:
    """Run the Schafer-Turek cylinder channel and return its metrics, the reference values (Re 20
    and Re 100 only) and relative errors. Forces are averaged over the last 10% of the steps
    (steady case) or the last 25% (shedding). The inlet ramps over a third of the run (at most
    400 D steps): a ramp of several periods of the channel's quarter-wave acoustic mode (4 L / c_s,
    ~150 D steps) leaves it nearly unexcited; a short ramp left +-10% Cd oscillations for thousands
    of steps."""
    if re <= 0 or diameter_cells < 4:
        raise ValueError(f"re/diameter_cells: must be > 0 / >= 4, got {re!r}/{diameter_cells!r}")
    steps = default_steps(re, diameter_cells) if steps is None else steps
    u_mean = 2.0 * u_max / 3.0
    grid, centre = cylinder_channel(diameter_cells)
    setup = LBMSetup(lattice="D2Q9", grid=grid, nu=u_mean * diameter_cells / re, u_lat=u_mean, steps=steps,
                     average_steps=max(steps // (10 if re < STEADY_REYNOLDS_LIMIT else 4), 1),
                     ramp_steps=min(steps // 3, 400 * diameter_cells), bounce_back=bounce_back,
                     collision=collision, ground="wall", top="wall", inflow="parabolic", dtype=dtype, device=device,
                     engine=engine)
    result = run_lbm(setup, [Body(Disc(centre, diameter_cells), float(diameter_cells))])
    metrics = cylinder_metrics(result, diameter_cells, re, u_mean)
    reference = SCHAFER_TUREK.get(int(re)) if float(re).is_integer() else None
    errors = {k: (metrics[k] - v) / v for k, v in (reference or {}).items() if metrics.get(k) is not None}
    return {**metrics, "re": re, "diameter_cells": diameter_cells, "steps": steps, "bounce_back": bounce_back,
            "collision": collision, "engine": engine_of(setup), "tau": 3 * setup.nu + 0.5, "grid": list(grid), "mlups": result.mlups,
            "wall_time_s": result.wall_time_s, "diverged": bool(result.diverged[0]),
            "reference": reference, "relative_error": errors}


def schiller_naumann_drag(re: float) -> float:
    """Sphere drag correlation Cd = 24/Re (1 + 0.15 Re^0.687), Re < 800."""
    return 24.0 / re * (1 + 0.15 * re**0.687)


def sphere_drag(re: float = 20, diameter_cells: int = 8, steps: int | None = None, u_lat: float = 0.05,
                bounce_back: str = "bouzidi", lattice: str = "D3Q19", dtype: str = "float32",
                device: str = "cpu") -> dict:
    """A sphere in a 12 D x 6 D x 6 D box with free-stream faces (5% blockage by area) against the
    Schiller-Naumann correlation; Cd on the frontal area pi D^2 / 4, averaged over the last 20%."""
    if re <= 0 or diameter_cells < 4:
        raise ValueError(f"re/diameter_cells: must be > 0 / >= 4, got {re!r}/{diameter_cells!r}")
    grid = (12 * diameter_cells, 6 * diameter_cells, 6 * diameter_cells)
    steps = round(3 * grid[0] / u_lat) if steps is None else steps  # three flow-throughs
    centre = (3.0 * diameter_cells, grid[1] / 2 - 0.5, grid[2] / 2 - 0.5)
    setup = LBMSetup(lattice=lattice, grid=grid, nu=u_lat * diameter_cells / re, u_lat=u_lat, steps=steps,
                     average_steps=max(steps // 5, 1), ramp_steps=min(round(5 * diameter_cells / u_lat), steps // 4),
                     bounce_back=bounce_back, ground="none", top="free_stream", dtype=dtype, device=device)
    result = run_lbm(setup, [Body(Disc(centre, diameter_cells), math.pi * diameter_cells**2 / 4)])
    reference = schiller_naumann_drag(re)
    cd = float(result.cd[0])
    return {"cd": cd, "reference_cd": reference, "relative_error": (cd - reference) / reference,
            "correlation": "Schiller-Naumann", "re": re, "diameter_cells": diameter_cells, "steps": steps,
            "grid": list(grid), "tau": 3 * setup.nu + 0.5, "mlups": result.mlups,
            "wall_time_s": result.wall_time_s, "diverged": bool(result.diverged[0])}
