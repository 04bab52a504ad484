"""Drag minimisation through a frozen surrogate by FFD (spec §3.4, §4 optimisation baselines).

One base shape is a dense, ordered, counter-clockwise contour (body units: L = 1, road at z = 0).
Its surface pool (pool_factor x N_s points, equally spaced in arc length) is deformed by
X' = X + Phi dP; normals are recomputed by central differences along the deformed contour.
Objective (drag force in base-shape units, volume/area penalty):
    J(dP) = mean_k S_Cd(t_k(X')) * A_ref(X') / A_ref0 + mu (A(X') / A0 - 1)^2
Methods, one result type:
    eot     K random transformations t_k per step (pool re-sampling, jitter, streamwise shift,
            scale about the centre), Adam, projection onto C1-C3 after every step;
    no_eot  the same with K = 1 and the identity on a fixed point set (the ablation);
    random  random feasible dP with as many surrogate calls as eot's steps x K.
All three keep the best iterate by their objective and end with a backtracking dP <- 0.8 dP
until C4 (|A/A0 - 1| <= volume_tolerance) holds.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch
from pydantic import Field
from shapely import Polygon, contains_xy, distance
from shapely import points as shapely_points

from tasks.core.params import Params

from .constraints import constraints_hold, displacement, polygon_area, project_controls
from .ffd import ControlLattice, deform, lattice_around, weight_matrix
from .vehicle_dataset import VOLUME_BOX
from .vehicles import resample_closed

METHODS = ("eot", "no_eot", "random")

# A frozen drag surrogate: (surface points [N_s, 2], outward normals [N_s, 2], volume points
# [N_v, 2], the deformed dense contour [P, 2]) -> Cd (0-d tensor, differentiable in its inputs).
CdModel = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]


class OptimSettings(Params):
    """steps: T_opt (eot / no_eot); transformations: K (eot; random search gets steps x K calls);
    delta_max: C1 bound on every control displacement (units of L); lr = lr_fraction x delta_max;
    penalty: mu of the area term; jitter: Gaussian sigma; shift: half-width of the streamwise shift;
    scale: half-width of the scale factor around 1 (all in units of L)."""

    method: Literal[METHODS] = "eot"
    steps: int = Field(default=100, ge=1)
    transformations: int = Field(default=8, ge=1)
    delta_max: float = Field(default=0.05, gt=0)
    surface_points: int = Field(default=256, ge=1)
    volume_points: int = Field(default=512, ge=1)
    pool_factor: int = Field(default=4, ge=1)
    penalty: float = Field(default=100.0, ge=0)
    volume_tolerance: float = Field(default=0.02, gt=0)
    backtrack_factor: float = Field(default=0.8, gt=0, lt=1)
    lr_fraction: float = Field(default=0.05, gt=0)
    jitter: float = Field(default=0.002, ge=0)
    shift: float = Field(default=0.005, ge=0)
    scale: float = Field(default=0.005, ge=0)
    seed: int = 0


@dataclass(frozen=True)
class BaseShape:
    """What the optimiser precomputes once per base shape (float64 tensors)."""

    pool: torch.Tensor  # [P, 2] surface pool, counter-clockwise
    phi: torch.Tensor  # [P, C] FFD weights of the pool
    lattice: ControlLattice
    volume_pool: torch.Tensor  # [pool_factor N_v, 2] fluid points for every feasible deformation
    area0: float
    a_ref0: float
    centre: torch.Tensor  # [2] bounding-box centre: the fixed point of the scale transformation


@dataclass(frozen=True)
class Transformation:
    """t: pick pool points, then X -> centre + scale (X - centre) + (shift, 0) (+ jitter)."""

    surface_index: torch.Tensor
    volume_index: torch.Tensor
    shift: float
    scale: float
    surface_noise: torch.Tensor | None  # [N_s, 2] or None (no jitter)
    volume_noise: torch.Tensor | None


@dataclass
class OptimResult:
    """Every method's answer. Forces are predicted Cd x A_ref(X') / A_ref0 on the canonical
    (identity, fixed points) input; reductions are relative to the base shape's."""

    method: str
    dP: np.ndarray  # [C, 2]
    deformed: np.ndarray  # [P, 2] deformed surface pool
    history: list[float]  # the method's objective at every evaluated iterate
    best_iteration: int
    predicted_force_base: float
    predicted_force: float
    predicted_reduction: float
    area_ratio: float  # A(X') / A0 (C4)
    a_ref_ratio: float  # A_ref(X') / A_ref0
    mean_displacement: float  # units of L
    max_displacement: float
    constraints_hold: bool  # C1-C4
    surrogate_calls: int
    backtracks: int
    wall_time_s: float


# ---------------------------------------------------------------- geometry (pure functions)

def contour_normals(contour: torch.Tensor) -> torch.Tensor:
    """Outward unit normals [P, 2] of a closed counter-clockwise contour [P, 2], by central
    differences of the neighbours (the tangent rotated clockwise)."""
    tangent = torch.roll(contour, -1, 0) - torch.roll(contour, 1, 0)
    normal = torch.stack([tangent[:, 1], -tangent[:, 0]], 1)
    return normal / normal.norm(dim=1, keepdim=True).clamp_min(1e-300)


def frontal_height(contour: torch.Tensor) -> torch.Tensor:
    """A_ref in 2D: the extent of the contour projected on z."""
    return contour[:, 1].max() - contour[:, 1].min()


def volume_pool(contour: np.ndarray, count: int, clearance: float, rng: np.random.Generator) -> np.ndarray:
    """`count` points uniform in VOLUME_BOX outside the base body dilated by `clearance`, so they
    stay in the fluid under every deformation whose displacement is at most `clearance`."""
    polygon = Polygon(contour)
    keep, (low, high) = [], np.array(VOLUME_BOX)
    while sum(len(k) for k in keep) < count:
        points = rng.uniform(low, high, (2 * count, 2))
        outside = ~contains_xy(polygon, points[:, 0], points[:, 1])
        far = distance(polygon.exterior, shapely_points(points)) > clearance
        keep.append(points[outside & far])
    return np.concatenate(keep)[:count]


def prepare(contour: np.ndarray, settings: OptimSettings) -> BaseShape:
    """The base shape's surface pool, FFD weights and volume pool (seeded by settings.seed)."""
    contour = np.ascontiguousarray(contour, dtype=np.float64)
    if contour.ndim != 2 or contour.shape[1] != 2 or len(contour) < 8:
        raise ValueError(f"contour: expected an ordered closed contour [P >= 8, 2], got shape {contour.shape}")
    if polygon_area(torch.as_tensor(contour)) <= 0:
        raise ValueError("contour: must be counter-clockwise (positive shoelace area), got a clockwise one")
    pool = torch.as_tensor(resample_closed(contour, settings.pool_factor * settings.surface_points))
    lattice = lattice_around(pool)
    rng = np.random.default_rng(settings.seed)
    volume = torch.as_tensor(volume_pool(contour, settings.pool_factor * settings.volume_points,
                                         settings.delta_max, rng))
    low, high = pool.min(0).values, pool.max(0).values
    return BaseShape(pool, weight_matrix(lattice, pool), lattice, volume, float(polygon_area(pool)),
                     float(frontal_height(pool)), (low + high) / 2)


# ---------------------------------------------------------------- transformations

def identity(shape: BaseShape, settings: OptimSettings) -> Transformation:
    """The fixed, training-like point set: every pool_factor-th surface point (equally spaced in
    arc length) and the first N_v volume points; no shift, scale or jitter."""
    surface = torch.arange(0, len(shape.pool), settings.pool_factor)
    return Transformation(surface, torch.arange(settings.volume_points), 0.0, 1.0, None, None)


def sample_transformation(shape: BaseShape, settings: OptimSettings, generator: torch.Generator) -> Transformation:
    """A random t ~ T: re-sampled surface / volume points, jitter, streamwise shift, scale."""
    def uniform(half_width: float) -> float:
        return float((2 * torch.rand((), generator=generator, dtype=torch.float64) - 1) * half_width)

    surface = torch.randperm(len(shape.pool), generator=generator)[:settings.surface_points].sort().values
    volume = torch.randperm(len(shape.volume_pool), generator=generator)[:settings.volume_points]
    noise = lambda n: settings.jitter * torch.randn(n, 2, generator=generator, dtype=torch.float64)
    return Transformation(surface, volume, uniform(settings.shift), 1.0 + uniform(settings.scale),
                          noise(settings.surface_points), noise(settings.volume_points))


def apply(t: Transformation, deformed: torch.Tensor, normals: torch.Tensor, volume: torch.Tensor,
          centre: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """The surrogate input under t: (surface points, normals, volume points, contour). Shift and an
    isotropic scale leave normals unchanged; jitter perturbs coordinates only."""
    offset = torch.tensor([t.shift, 0.0], dtype=deformed.dtype)
    move = lambda x: x + (t.scale - 1) * (x - centre) + offset  # exactly x for the identity
    surface, contour, points = move(deformed[t.surface_index]), move(deformed), move(volume[t.volume_index])
    if t.surface_noise is not None:
        surface, points = surface + t.surface_noise, points + t.volume_noise
    return surface, normals[t.surface_index], points, contour


# ---------------------------------------------------------------- objective

def drag_force(model: CdModel, shape: BaseShape, deformed: torch.Tensor, t: Transformation) -> torch.Tensor:
    """S_Cd(t(X')) * A_ref(X') / A_ref0: predicted drag force in base-shape units."""
    surface, normals, volume, contour = apply(t, deformed, contour_normals(deformed), shape.volume_pool, shape.centre)
    return model(surface, normals, volume, contour) * frontal_height(deformed) / shape.a_ref0


def objective(model: CdModel, shape: BaseShape, dP: torch.Tensor, transformations: list[Transformation],
              penalty: float) -> torch.Tensor:
    """J(dP) = mean_k drag_force(t_k) + penalty (A(X') / A0 - 1)^2."""
    deformed = deform(shape.pool, shape.phi, dP)
    force = torch.stack([drag_force(model, shape, deformed, t) for t in transformations]).mean()
    return force + penalty * (polygon_area(deformed) / shape.area0 - 1) ** 2


def area_ratio(shape: BaseShape, dP: torch.Tensor) -> float:
    return float(polygon_area(deform(shape.pool, shape.phi, dP)) / shape.area0)


def backtrack(shape: BaseShape, dP: torch.Tensor, settings: OptimSettings, limit: int = 200) -> tuple[torch.Tensor, int]:
    """dP <- factor dP until |A/A0 - 1| <= tolerance (C4); scaling keeps C1-C3."""
    for count in range(limit):
        if abs(area_ratio(shape, dP) - 1) <= settings.volume_tolerance:
            return dP, count
        dP = settings.backtrack_factor * dP
    return torch.zeros_like(dP), limit


# ---------------------------------------------------------------- methods

def _gradient_descent(model: CdModel, shape: BaseShape, settings: OptimSettings) -> tuple[torch.Tensor, list[float], int, int]:
    generator = torch.Generator().manual_seed(settings.seed)
    eot = settings.method == "eot"
    fixed = [identity(shape, settings)]
    dP = torch.zeros(shape.lattice.size, 2, dtype=torch.float64, requires_grad=True)
    adam = torch.optim.Adam([dP], lr=settings.lr_fraction * settings.delta_max)
    history, best, best_dP, best_it = [], float("inf"), dP.detach().clone(), 0
    for it in range(settings.steps):
        ts = [sample_transformation(shape, settings, generator) for _ in range(settings.transformations)] if eot else fixed
        adam.zero_grad()
        value = objective(model, shape, dP, ts, settings.penalty)
        value.backward()
        history.append(float(value.detach()))
        if history[-1] < best:
            best, best_dP, best_it = history[-1], dP.detach().clone(), it
        adam.step()
        with torch.no_grad():
            dP.copy_(project_controls(dP, shape.lattice, settings.delta_max))
    calls = settings.steps * (settings.transformations if eot else 1)
    return best_dP, history, best_it, calls


def _random_search(model: CdModel, shape: BaseShape, settings: OptimSettings) -> tuple[torch.Tensor, list[float], int, int]:
    """Candidates: dP = 0, then z-displacements U[-delta_max, delta_max] of the free control points,
    projected (C1-C3) and backtracked (C4); each scored by one canonical surrogate call."""
    generator = torch.Generator().manual_seed(settings.seed)
    canonical = [identity(shape, settings)]
    budget = settings.steps * settings.transformations
    best, best_dP, best_it, history = float("inf"), None, 0, []
    for it in range(budget):
        dP = torch.zeros(shape.lattice.size, 2, dtype=torch.float64)
        if it:
            dP[:, 1] = settings.delta_max * (2 * torch.rand(shape.lattice.size, generator=generator, dtype=torch.float64) - 1)
            dP, _ = backtrack(shape, project_controls(dP, shape.lattice, settings.delta_max), settings)
        with torch.no_grad():
            history.append(float(objective(model, shape, dP, canonical, settings.penalty)))
        if history[-1] < best:
            best, best_dP, best_it = history[-1], dP, it
    return best_dP, history, best_it, budget


def optimise(model: CdModel, shape: BaseShape, settings: OptimSettings) -> OptimResult:
    """Minimise predicted drag force of `shape` under C1-C4 with settings.method."""
    started = time.perf_counter()
    search = _random_search if settings.method == "random" else _gradient_descent
    dP, history, best_it, calls = search(model, shape, settings)
    dP, backtracks = backtrack(shape, dP.detach(), settings)
    canonical = identity(shape, settings)
    with torch.no_grad():
        deformed = deform(shape.pool, shape.phi, dP)
        base_force = float(drag_force(model, shape, shape.pool, canonical))
        force = float(drag_force(model, shape, deformed, canonical))
    moved = displacement(shape.pool, deformed)
    ratio = area_ratio(shape, dP)
    holds = constraints_hold(dP, shape.lattice, settings.delta_max) and abs(ratio - 1) <= settings.volume_tolerance + 1e-12
    return OptimResult(settings.method, dP.numpy(), deformed.numpy(), history, best_it, base_force, force,
                       (base_force - force) / base_force, ratio, float(frontal_height(deformed)) / shape.a_ref0,
                       float(moved["mean"]), float(moved["max"]), bool(holds), calls, backtracks,
                       time.perf_counter() - started)
