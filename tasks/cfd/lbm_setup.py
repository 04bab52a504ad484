"""The wind tunnel every engine runs: its setup and bodies (checked at the door), the geometry the
engines build from the bodies before the time loop, and the result they all return.

Coordinates are LATTICE coordinates: node index i sits at coordinate i along each axis; axes
are (x, z) in 2D and (x, y, z) in 3D, x streamwise, z (last axis) vertical.
Domain faces: inlet x = 0 (equilibrium at the imposed velocity, sin^2 ramp, and the density of
column 1), outlet x = NX-1 (equilibrium
at rho = 1 with the velocity of column NX-2: pressure anchor), top z = NZ-1 (free stream or a
no-slip wall), bottom z = 0 (moving ground, no-slip wall or free stream), 3D side faces y = 0 and
y = NY-1 free stream. With a ground/wall, row z = 0 holds wall nodes and the (half-way) wall
surface lies at z = 0.5; a top wall lies at z = NZ - 1.5.
A body is an `inside(points [N, D]) -> bool [N]` function in lattice coordinates; nodes where it
is true (and that are not on a domain face) are solid. Forces come from momentum exchange on the
body's links only (not on ground or walls).
The engines (torch: lbm.py, numba: fused.py, cuda: fused_cuda.py) are picked in engines.py.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from tasks.core.device import resolve_device

from .lattice import get_lattice
from .links import BodyLinks, build_links

InsideFunction = Callable[[np.ndarray], np.ndarray]

LATTICES = ("D2Q9", "D3Q19", "D3Q27")
BOUNCE_BACKS = ("halfway", "bouzidi")
COLLISIONS = ("bgk", "trt", "regularized")
GROUNDS = ("moving", "wall", "none")
TOPS = ("free_stream", "wall")
INFLOWS = ("uniform", "parabolic")
DTYPES = ("float32", "float64")
ENGINES = ("auto", "numba", "torch", "cuda")


@dataclass(frozen=True)
class LBMSetup:
    """Everything shared by the bodies of one batch.

    grid: (NX, NZ) for D2Q9, (NX, NY, NZ) for D3Q19/D3Q27.
    tau or nu (exactly one): BGK relaxation time / lattice viscosity, nu = (tau - 1/2)/3.
    u_lat: reference velocity in lattice units (free stream; mean velocity for a parabolic inflow,
        whose maximum is then 1.5 u_lat). Coefficients use q_inf = 0.5 u_lat^2 (rho_inf = 1).
    steps: time steps; average_steps: the last steps over which forces and fields are averaged.
    ramp_steps: inlet (and moving-ground) speed ramps as sin^2(pi t / (2 ramp_steps)); 0 = none.
    bounce_back: body boundary, "halfway" or "bouzidi" (linear interpolated, q by bisection of
        the inside function; half-way fallback where the second fluid node is missing).
    collision: "bgk", "trt" (magic parameter 3/16) or "regularized" (regularised BGK).
    ground: "moving" (half-way wall moving at the ramped free-stream speed), "wall" (no slip) or
        "none" (free stream, like the top). top: "free_stream" or "wall" (no slip).
    inflow: "uniform" or "parabolic" (2D channel between bottom and top walls, Schafer-Turek).
    profile_bins: K bins of the streamwise drag build-up profile.
    engine: "numba" (fused CPU solver, tasks/cfd/fused.py), "torch" (tensor operations, CPU or GPU:
        the reference), "cuda" (fused GPU kernels, tasks/cfd/fused_cuda.py: needs a CUDA device or
        numba's CUDA simulator) or "auto" (numba on the CPU, torch on a GPU).
    """

    lattice: str = "D2Q9"
    grid: tuple[int, ...] = (120, 49)
    tau: float | None = None
    nu: float | None = None
    u_lat: float = 0.08
    steps: int = 1500
    average_steps: int = 500
    ramp_steps: int = 0
    bounce_back: str = "halfway"
    collision: str = "bgk"
    ground: str = "moving"
    top: str = "free_stream"
    inflow: str = "uniform"
    profile_bins: int = 32
    dtype: str = "float32"
    device: str = "cpu"
    engine: str = "auto"


@dataclass(frozen=True)
class Body:
    """One body of a batch.

    inside: vectorised inside test in lattice coordinates (must be picklable, e.g. a module-level
        function or a dataclass instance, when bodies are spread over worker processes).
    reference_area: A_ref in cells (2D: frontal height in cells; 3D: frontal area in cells^2);
        coefficients are F / (0.5 rho_inf u_lat^2 A_ref).
    profile_x_range: (x_front, x_rear) in lattice x of the K-bin drag build-up profile; a link at
        x goes to bin floor(K (x - x_front) / (x_rear - x_front)), clipped to [0, K-1].
        None: the x-extent of the body's solid nodes widened by half a cell.
    """

    inside: InsideFunction
    reference_area: float
    profile_x_range: tuple[float, float] | None = None


@dataclass
class LBMResult:
    """Per-body outputs (numpy, first axis = body) of one run.

    cd, cl: time-averaged force coefficients [B] (cl: vertical, last axis; 3D also cs: side, y).
    coefficient_trace: per-step force coefficients [steps, B, D] (x, (y,) z) for convergence checks.
    drag_profile: cumulative time-averaged drag build-up [B, K]; drag_profile[:, -1] == cd.
    rho_mean [B, *grid], u_mean [B, D, *grid]: time-averaged density and velocity (lattice units);
        values on solid nodes are meaningless, sample with tasks.cfd.fields (fluid nodes only).
    solid: [B, *grid] bool, body nodes (not walls). wall_rows: the z rows that are walls.
    diverged: [B] bool, a non-finite value appeared. mlups: million node updates per second
        (all B bodies counted). wall_time_s: seconds of the time loop.
    """

    cd: np.ndarray
    cl: np.ndarray
    cs: np.ndarray | None
    coefficient_trace: np.ndarray
    drag_profile: np.ndarray
    rho_mean: np.ndarray
    u_mean: np.ndarray
    solid: np.ndarray
    wall_rows: tuple[int, ...]
    diverged: np.ndarray
    mlups: float
    wall_time_s: float
    setup: LBMSetup



def relaxation_time(setup: LBMSetup) -> float:
    """tau from the setup's tau or nu (nu = (tau - 1/2) / 3)."""
    return setup.tau if setup.tau is not None else 3 * setup.nu + 0.5


def validate_setup(setup: LBMSetup) -> None:
    """Raise ValueError naming the first bad field of `setup`."""
    choices = {"lattice": LATTICES, "bounce_back": BOUNCE_BACKS, "collision": COLLISIONS, "ground": GROUNDS,
               "top": TOPS, "inflow": INFLOWS, "dtype": DTYPES, "engine": ENGINES}
    for name, allowed in choices.items():
        if getattr(setup, name) not in allowed:
            raise ValueError(f"{name}: must be one of {', '.join(allowed)}, got {getattr(setup, name)!r}")
    dim = get_lattice(setup.lattice).dim
    if len(setup.grid) != dim or min(setup.grid) < 4:
        raise ValueError(f"grid: must be {dim} sizes >= 4 for {setup.lattice}, got {setup.grid!r}")
    if (setup.tau is None) == (setup.nu is None):
        raise ValueError(f"tau/nu: give exactly one, got tau={setup.tau!r}, nu={setup.nu!r}")
    if not relaxation_time(setup) > 0.5:
        raise ValueError(f"tau: must be > 0.5 (nu > 0), got tau={setup.tau!r}, nu={setup.nu!r}")
    if not 0 < setup.u_lat < 0.4:
        raise ValueError(f"u_lat: must be in (0, 0.4), got {setup.u_lat!r}")
    if setup.steps < 1 or not 1 <= setup.average_steps <= setup.steps:
        raise ValueError(f"average_steps: must be in [1, steps={setup.steps}], got {setup.average_steps!r}")
    if setup.ramp_steps < 0 or setup.profile_bins < 1:
        raise ValueError(f"ramp_steps/profile_bins: must be >= 0 / >= 1, got {setup.ramp_steps!r}/"
                         f"{setup.profile_bins!r}")
    if setup.inflow == "parabolic" and (dim != 2 or setup.ground != "wall" or setup.top != "wall"):
        raise ValueError("inflow: 'parabolic' needs a 2D lattice with ground='wall' and top='wall', got "
                         f"{setup.lattice}, ground={setup.ground!r}, top={setup.top!r}")
    if setup.engine == "numba" and resolve_device(setup.device) != "cpu":
        raise ValueError(f"engine: 'numba' runs on the CPU only, got device={setup.device!r}")
    if setup.engine == "cuda" and not (_cuda_simulated() or resolve_device(setup.device).startswith("cuda")):
        raise ValueError(f"engine: 'cuda' needs a CUDA device (or numba's simulator, NUMBA_ENABLE_CUDASIM=1), got "
                         f"device={setup.device!r}")


def _cuda_simulated() -> bool:
    """numba's CUDA simulator is on (set at numba's import; numba is imported only when asked about)."""
    import numba

    return bool(numba.config.ENABLE_CUDASIM)


def node_coordinates(grid: Sequence[int]) -> np.ndarray:
    """[prod(grid), D] lattice coordinates of all nodes, in C order."""
    axes = np.meshgrid(*(np.arange(n, dtype=float) for n in grid), indexing="ij")
    return np.stack([a.ravel() for a in axes], axis=1)


def voxelize(bodies: Sequence[Body], grid: Sequence[int]) -> np.ndarray:
    """Solid nodes [B, *grid] of each body, off the domain faces (faces are boundary conditions)."""
    points = node_coordinates(grid)
    interior = np.zeros(grid, dtype=bool)
    interior[tuple(slice(1, n - 1) for n in grid)] = True
    return np.stack([np.asarray(b.inside(points), dtype=bool).reshape(grid) & interior for b in bodies])




def _profile_bins(links, bodies: Sequence[Body], solid: np.ndarray, bins: int) -> torch.Tensor:
    """Flat bin index body * K + k of every link for the drag build-up profile."""
    ranges = []
    for b, body in enumerate(bodies):
        if body.profile_x_range is not None:
            ranges.append(body.profile_x_range)
        else:
            xs = np.nonzero(solid[b].any(axis=tuple(range(1, solid.ndim - 1))))[0]
            ranges.append((xs.min() - 0.5, xs.max() + 0.5) if len(xs) else (0.0, 1.0))
    ranges = torch.as_tensor(ranges, dtype=links.x.dtype, device=links.x.device)
    front, rear = ranges[links.body, 0], ranges[links.body, 1]
    k = torch.floor(bins * (links.x - front) / (rear - front)).long().clamp(0, bins - 1)
    return links.body * bins + k


@dataclass(frozen=True)
class BatchGeometry:
    """What both engines build from the bodies before the time loop.

    solid [B, *grid]: body nodes; walls: the wall rows; dead [B, *grid]: nodes reset to rest each
    step (body and wall rows); links: the body links; profile_index [L]: flat bin body * K + k of
    each link; rest_exchange [L] (float64): the exchange of the fluid at rest on each link.
    """

    solid: np.ndarray
    walls: tuple[int, ...]
    dead: np.ndarray
    links: BodyLinks
    profile_index: torch.Tensor
    rest_exchange: torch.Tensor


def check_bodies(bodies: Sequence[Body]) -> None:
    if not bodies:
        raise ValueError("bodies: need at least one body, got none")
    for b, body in enumerate(bodies):
        if not body.reference_area > 0:
            raise ValueError(f"bodies[{b}].reference_area: must be > 0, got {body.reference_area!r}")


def batch_geometry(setup: LBMSetup, bodies: Sequence[Body], device: str) -> BatchGeometry:
    lattice, grid = get_lattice(setup.lattice), tuple(setup.grid)
    solid = voxelize(bodies, grid)
    walls = tuple(r for r, on in ((0, setup.ground != "none"), (grid[-1] - 1, setup.top == "wall")) if on)
    interior = np.zeros(grid, dtype=bool)
    interior[tuple(slice(1, n - 1) for n in grid)] = True
    links = build_links(solid, interior & ~solid, lattice, [b.inside for b in bodies] if setup.bounce_back == "bouzidi"
                        else None, getattr(torch, setup.dtype), device)
    # Gauge pressure: subtract the exchange of the fluid at rest (rho = 1), 2 w_i on every link. Over a closed body
    # these terms cancel, so the force is unchanged, but per link they are O(p_inf / q_inf) ~ 100: left in, they made
    # the build-up profile a voxel staircase of +-p_inf steps instead of a localisation of drag.
    nodes = solid.size
    rest_exchange = 2 * torch.as_tensor(lattice.w, dtype=torch.float64, device=device)[links.source // nodes]
    dead = solid.copy()
    for row in walls:
        dead[..., row] = True
    return BatchGeometry(solid, walls, dead, links, _profile_bins(links, bodies, solid, setup.profile_bins),
                         rest_exchange)


def assemble_result(setup: LBMSetup, bodies: Sequence[Body], geometry: BatchGeometry, forces: np.ndarray,
                    profile: np.ndarray, rho_sum: np.ndarray, u_sum: np.ndarray, finite: np.ndarray,
                    wall_time: float, timed_steps: int | None = None) -> LBMResult:
    """LBMResult from the loop's sums: forces [steps, B, D], profile [B * K], rho_sum [B, *grid],
    u_sum [D, B, *grid] (float64), finite [B]: the final populations of each body are finite;
    wall_time: seconds of `timed_steps` steps (default all)."""
    n_bodies, dim = forces.shape[1], forces.shape[2]
    dynamic_pressure = 0.5 * setup.u_lat**2
    areas = np.array([b.reference_area for b in bodies], dtype=float)
    coefficients = forces / (dynamic_pressure * areas[None, :, None])
    mean = coefficients[setup.steps - setup.average_steps:].mean(0)
    drag_profile = np.cumsum(profile.reshape(n_bodies, -1) / setup.average_steps, axis=1)
    drag_profile = drag_profile / (dynamic_pressure * areas[:, None])
    diverged = ~(finite & np.isfinite(forces).all(axis=(0, 2)))
    return LBMResult(
        cd=mean[:, 0], cl=mean[:, -1], cs=mean[:, 1] if dim == 3 else None, coefficient_trace=coefficients,
        drag_profile=drag_profile, rho_mean=rho_sum / setup.average_steps,
        u_mean=np.swapaxes(u_sum / setup.average_steps, 0, 1), solid=geometry.solid, wall_rows=geometry.walls,
        diverged=diverged,
        mlups=n_bodies * int(np.prod(setup.grid)) * (timed_steps or setup.steps) / max(wall_time, 1e-9) / 1e6,
        wall_time_s=wall_time, setup=setup)
