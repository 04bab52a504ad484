"""The fused CPU solver (numba): run_lbm's wind tunnel, step for step, on flat padded buffers.

Per step: one fused collide + push-stream pass (fused_kernel, averages folded in on averaging
steps), then the boundary conditions in run_torch's order (body links, bottom, top, sides, inlet,
outlet, reset of dead nodes), then the two buffers swap; the whole time loop is one compiled call. Populations live in two arrays
[Q, B * prod(grid + 2)]: every body padded by one node on every side, so the push from a face
node lands in padding that nobody reads; the padding nodes inside the span are pushed too (into
face populations only). Face populations hold such values or those of two steps before, which,
as in the torch solver, every face condition overwrites before use. The rows keep x contiguous
(memory order [B, z, (y,) x]): the ground, top, side and wall rows then are contiguous runs and only
the inlet and outlet columns, the smallest faces, are strided; with z contiguous the D3Q19 step spent
more time on its faces, each node touching Q cache lines, than on its volume.
The torch solver (lbm.run_torch) is the reference: tests/cfd/test_fused.py keeps the two equal.
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from . import fused_boundaries as bc
from .faces import parabolic_profile, ramped_speed
from .fused_kernel import compiled_solver, kernel_coefficients
from .lattice import get_lattice
from .lbm_setup import Body, LBMResult, LBMSetup, assemble_result, batch_geometry, relaxation_time


@dataclass(frozen=True)
class PaddedLayout:
    """position [B, *grid]: flat padded index of every real node; offsets [Q]: flat shift of c_i;
    size: nodes per direction row, padding included."""

    position: np.ndarray
    offsets: np.ndarray
    size: int

    @classmethod
    def build(cls, lattice, n_bodies: int, grid: tuple[int, ...], x_innermost: bool = False) -> PaddedLayout:
        """Rows in C order of [B, *grid] (the last axis, z, contiguous), or with x contiguous (memory order
        [B, z, (y,) x]: the ground, top and side faces then are contiguous runs, only the inlet and outlet
        columns strided)."""
        padded = (n_bodies, *(n + 2 for n in grid))
        memory_axes = (0, *range(len(grid), 0, -1)) if x_innermost else tuple(range(len(grid) + 1))
        index = np.arange(int(np.prod(padded)), dtype=np.int64).reshape([padded[a] for a in memory_axes])
        index = index.transpose(np.argsort(memory_axes))  # back to [B, *grid] axes
        strides = [index.strides[a + 1] // index.itemsize for a in range(len(grid))]
        inner = (slice(None), *(slice(1, -1) for _ in grid))
        return cls(np.ascontiguousarray(index[inner]), (lattice.c @ np.array(strides)).astype(np.int64),
                   int(np.prod(padded)))

    def index(self, entries: np.ndarray, n_nodes: int, pushed: bool) -> np.ndarray:
        """Indices i * N + node into unpadded [Q * N] populations -> flat padded indices i * size +
        position; pushed: where the push pass put f_i*(node), at position + offsets[i]."""
        direction, node = entries // n_nodes, self.position.ravel()[entries % n_nodes]
        return direction * self.size + node + (self.offsets[direction] if pushed else 0)

    @property
    def span(self) -> tuple[int, int]:
        """(first, last + 1) flat position of the real nodes: the range the collide + push pass runs over."""
        return int(self.position.min()), int(self.position.max()) + 1

    def side_nodes(self) -> np.ndarray:
        """The 3D side faces (y = 0 and y = NY - 1), free stream; empty in 2D."""
        if self.position.ndim != 4:
            return np.zeros(0, dtype=np.int64)
        return np.concatenate([self.position[:, :, 0].ravel(), self.position[:, :, -1].ravel()])


def node_runs(positions: np.ndarray) -> np.ndarray:
    """[R, 2] (first, stop) of the maximal runs of consecutive flat positions among `positions` (distinct), in
    memory order: the form in which fused_boundaries fills or sweeps a face."""
    flat = np.sort(positions.ravel())
    if flat.size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    breaks = np.flatnonzero(np.diff(flat) != 1) + 1
    return np.stack([flat[np.r_[0, breaks]], flat[np.r_[breaks - 1, flat.size - 1]] + 1], axis=1).astype(np.int64)


def face_column(position: np.ndarray, column: int, inner: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(nodes, neighbours, order): the nodes of x column `column` and their neighbours in column `inner`, in memory
    order (the strided column then is walked one way); order: where they stand in position[:, column].ravel()."""
    nodes = position[:, column].ravel()
    order = np.argsort(nodes)
    return nodes[order], position[:, inner].ravel()[order], order


def inflow_profile(setup: LBMSetup) -> np.ndarray:
    """The inlet speed factor along z [NZ] (float64 of the setup's dtype, as run_torch rounds it)."""
    nz, dtype = setup.grid[-1], np.dtype(setup.dtype)
    profile = parabolic_profile(nz, 1.0).numpy().astype(dtype) if setup.inflow == "parabolic" else np.ones(nz, dtype)
    return profile.astype(np.float64)


def ramped_speeds(setup: LBMSetup) -> np.ndarray:
    """The inlet (and moving ground) speed of every step, faces.ramped_speed's values."""
    return np.array([ramped_speed(step, setup.u_lat, setup.ramp_steps) for step in range(setup.steps)])


def run_fused(setup: LBMSetup, bodies: Sequence[Body]) -> LBMResult:
    lattice = get_lattice(setup.lattice)
    dim, q, n_bodies, grid = lattice.dim, lattice.q, len(bodies), tuple(setup.grid)
    dtype = np.dtype(setup.dtype)
    geometry = batch_geometry(setup, bodies, "cpu")
    layout = PaddedLayout.build(lattice, n_bodies, grid, x_innermost=True)
    position, offsets, size = layout.position, layout.offsets, layout.size
    n_nodes = geometry.solid.size

    links = geometry.links
    source = layout.index(links.source.numpy(), n_nodes, pushed=True)  # f_i*(x_f) after the push
    second = layout.index(links.second.numpy(), n_nodes, pushed=True)
    target = layout.index(links.target.numpy(), n_nodes, pushed=False)
    link_args = (source, second, target, links.first_weight.numpy().astype(dtype),
                 links.second_weight.numpy().astype(dtype), geometry.rest_exchange.numpy(), links.body.numpy(),
                 links.velocity.numpy().astype(np.float64), geometry.profile_index.numpy(), np.empty(len(source), dtype))

    c, w = lattice.c.astype(np.float64), lattice.w.astype(np.float64)
    inlet, inlet_inner, order = face_column(position, 0, 1)
    outlet, outlet_inner, _ = face_column(position, -1, -2)
    inflow = np.broadcast_to(inflow_profile(setup), position[:, 0].shape).ravel()[order]
    nodes = (node_runs(position[..., 0]), node_runs(position[..., -1]), node_runs(position[..., 1]),
             node_runs(position[..., -2]), node_runs(layout.side_nodes()), inlet, inlet_inner, outlet, outlet_inner,
             inflow, node_runs(position[geometry.dead]))
    lattice_arrays = (offsets, c, w, lattice.opposite.astype(np.int64), np.flatnonzero(lattice.c[:, -1] == -1),
                      np.flatnonzero(lattice.c[:, -1] == 1))
    ground = {"none": bc.GROUND_NONE, "wall": bc.GROUND_WALL, "moving": bc.GROUND_MOVING}[setup.ground]

    buffers = np.empty((2, q, size), dtype=dtype)
    buffers[:] = lattice.w.astype(dtype)[:, None]
    coef = kernel_coefficients(setup.lattice, setup.collision, 1.0 / relaxation_time(setup), dtype)
    speeds = ramped_speeds(setup)
    forces = np.zeros((setup.steps, n_bodies, dim))
    profile = np.zeros(n_bodies * setup.profile_bins)
    rho_sum, u_sum = np.zeros(size), np.zeros((dim, size))
    time_loop = compiled_solver(setup.lattice, setup.collision).time_loop
    arguments = (setup.steps - setup.average_steps, *layout.span, offsets, coef, rho_sum, u_sum, speeds, forces, profile,
                 link_args, nodes, lattice_arrays, ground, setup.top == "wall")
    time_loop(buffers, 0, 1, *arguments)  # step 0 outside the clock: the first call compiles or loads the loop
    started = time.perf_counter()
    time_loop(buffers, 1, setup.steps, *arguments)
    wall_time = time.perf_counter() - started

    f = buffers[setup.steps % 2]
    finite = np.isfinite(f[:, position]).all(axis=tuple(a for a in range(dim + 2) if a != 1))
    return assemble_result(setup, bodies, geometry, forces, profile, rho_sum[position],
                           u_sum[:, position], finite, wall_time, timed_steps=setup.steps - 1)
