"""The GPU solver (numba.cuda): run_lbm's wind tunnel, step for step, batched over bodies.

Same buffers as the fused CPU solver (tasks/cfd/fused.py's PaddedLayout: [Q, B * prod(grid + 2)]),
same boundary conditions in the same order, as the kernels of fused_cuda_kernels (four launches a
step in 2D, five in 3D). Everything stays on the device during the loop: the ramped speed of every
step is precomputed (fused.ramped_speeds, so the values are those of the CPU solvers), forces go to
a [steps, B, D] device array, averages and the profile accumulate in float64 on the device.
Deterministic: no atomics; forces sum chunks of links, bins and bodies, each in a fixed order.
The only host-device transfers are `cuda.to_device` before the loop and `copy_to_host` after it,
the same calls under numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1), where tests run this on a CPU.
Runs on numba's current CUDA device.
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numba import cuda

from . import fused_cuda_kernels as kernels
from .fused import PaddedLayout, inflow_profile, ramped_speeds
from .fused_cuda_kernels import launch
from .fused_kernel import coefficients
from .lattice import get_lattice
from .lbm_setup import BatchGeometry, Body, LBMResult, LBMSetup, assemble_result, batch_geometry, relaxation_time


@dataclass(frozen=True)
class LinkChunks:
    """Body links sorted by profile bin (body * K + k), in padded flat indices, cut into chunks of at most
    LINKS_PER_CHUNK links of one bin: chunk c holds links chunk_start[c]..chunk_start[c + 1] - 1, bin k
    chunks bin_chunk_start[k]..bin_chunk_start[k + 1] - 1."""

    chunk_start: np.ndarray
    bin_chunk_start: np.ndarray
    source: np.ndarray
    second: np.ndarray
    target: np.ndarray
    first_weight: np.ndarray
    second_weight: np.ndarray
    rest: np.ndarray
    velocity: np.ndarray

    @classmethod
    def build(cls, geometry: BatchGeometry, layout: PaddedLayout, n_bins: int, dtype: np.dtype) -> LinkChunks:
        links, n_nodes = geometry.links, geometry.solid.size
        bins = geometry.profile_index.numpy()
        order = np.argsort(bins, kind="stable")
        bin_start = np.searchsorted(bins[order], np.arange(n_bins + 1))
        chunk_start = np.concatenate([np.arange(first, end, kernels.LINKS_PER_CHUNK)
                                      for first, end in zip(bin_start[:-1], bin_start[1:])] + [[len(order)]])
        chunks_per_bin = -(-np.diff(bin_start) // kernels.LINKS_PER_CHUNK)

        padded = lambda entries, pushed: layout.index(entries.numpy()[order], n_nodes, pushed)
        return cls(chunk_start.astype(np.int64), np.concatenate([[0], np.cumsum(chunks_per_bin)]).astype(np.int64),
                   padded(links.source, True), padded(links.second, True), padded(links.target, False),
                   links.first_weight.numpy()[order].astype(dtype), links.second_weight.numpy()[order].astype(dtype),
                   geometry.rest_exchange.numpy()[order], links.velocity.numpy()[order].astype(np.float64))


@dataclass(frozen=True)
class FaceNodes:
    """Padded positions of the domain-face work: wall rows (fluid node, side -1 bottom / +1 top, 1.0 where the
    wall moves), free-stream rows, 3D side faces, inlet/outlet columns with their inner columns, and the dead
    nodes outside the first and last two columns (the inlet/outlet threads reset those inside)."""

    wall_nodes: np.ndarray
    wall_sides: np.ndarray
    wall_moving: np.ndarray
    free_nodes: np.ndarray
    side_nodes: np.ndarray
    end_positions: np.ndarray
    end_inners: np.ndarray
    inflow: np.ndarray
    is_inlet: np.ndarray
    reset_position: np.ndarray
    reset_inner: np.ndarray
    dead: np.ndarray

    @classmethod
    def build(cls, setup: LBMSetup, geometry: BatchGeometry, layout: PaddedLayout) -> FaceNodes:
        position = layout.position
        walls, free = [], []
        if setup.ground == "none":
            free.append(position[..., 0].ravel())
        else:
            walls.append((position[..., 1].ravel(), -1.0, float(setup.ground == "moving")))
        if setup.top == "wall":
            walls.append((position[..., -2].ravel(), 1.0, 0.0))
        else:
            free.append(position[..., -1].ravel())
        inlet_count = position[:, 0].size
        dead = geometry.dead
        return cls(
            wall_nodes=np.concatenate([nodes for nodes, _, _ in walls] or [np.zeros(0, dtype=np.int64)]),
            wall_sides=np.concatenate([np.full(len(nodes), side) for nodes, side, _ in walls] or [np.zeros(0)]),
            wall_moving=np.concatenate([np.full(len(nodes), moving) for nodes, _, moving in walls] or [np.zeros(0)]),
            free_nodes=np.concatenate(free or [np.zeros(0, dtype=np.int64)]), side_nodes=layout.side_nodes(),
            end_positions=np.concatenate([position[:, 0].ravel(), position[:, -1].ravel()]),
            end_inners=np.concatenate([position[:, 1].ravel(), position[:, -2].ravel()]),
            inflow=np.concatenate([np.broadcast_to(inflow_profile(setup), position[:, 0].shape).ravel(),
                                   np.zeros(inlet_count)]),
            is_inlet=np.arange(2 * inlet_count) < inlet_count,
            reset_position=np.concatenate([dead[:, 0].ravel(), dead[:, -1].ravel()]),
            reset_inner=np.concatenate([dead[:, 1].ravel(), dead[:, -2].ravel()]),
            dead=position[:, 2:-2][dead[:, 2:-2]])


def run_cuda(setup: LBMSetup, bodies: Sequence[Body]) -> LBMResult:
    lattice, dtype, n_bodies = get_lattice(setup.lattice), np.dtype(setup.dtype), len(bodies)
    dim, q = lattice.dim, lattice.q
    geometry = batch_geometry(setup, bodies, "cpu")
    layout = PaddedLayout.build(lattice, n_bodies, tuple(setup.grid))
    position = layout.position
    n_bins = n_bodies * setup.profile_bins
    links = LinkChunks.build(geometry, layout, n_bins, dtype)
    face = FaceNodes.build(setup, geometry, layout)
    start, stop = layout.span

    to_device = lambda array: cuda.to_device(np.ascontiguousarray(array))
    d_links = {name: to_device(getattr(links, name)) for name in LinkChunks.__dataclass_fields__}
    d_face = {name: to_device(getattr(face, name)) for name in FaceNodes.__dataclass_fields__}
    c, w = to_device(lattice.c.astype(np.float64)), to_device(lattice.w.astype(np.float64))
    weights, opposite = to_device(lattice.w.astype(dtype)), to_device(lattice.opposite.astype(np.int64))
    offsets = to_device(layout.offsets)
    coef = to_device(coefficients(setup.lattice, setup.collision, 1.0 / relaxation_time(setup), dtype))
    speeds = to_device(ramped_speeds(setup))
    buffers = [to_device(np.broadcast_to(lattice.w.astype(dtype)[:, None], (q, layout.size))) for _ in range(2)]
    flat = [buffer.reshape(-1) for buffer in buffers]
    reflected = cuda.device_array(len(links.source), dtype=dtype)
    n_chunks = len(links.chunk_start) - 1
    chunk_force, bin_force = cuda.device_array((n_chunks, dim)), cuda.device_array((n_bins, dim))
    forces = to_device(np.zeros((setup.steps, n_bodies, dim)))
    profile = to_device(np.zeros(n_bins))
    rho_sum, u_sum = to_device(np.zeros(layout.size)), to_device(np.zeros((dim, layout.size)))
    plain, averaging = (kernels.fused_kernel(setup.lattice, setup.collision, flag) for flag in (False, True))
    first_averaged = setup.steps - setup.average_steps
    face_threads = len(links.source) + len(face.wall_nodes) + len(face.free_nodes) + n_bins
    state = [0, 1]

    def advance(step: int) -> None:
        f, g = state
        average = step >= first_averaged
        launch(averaging if average else plain, stop - start, buffers[f], buffers[g], rho_sum, u_sum, start, stop,
               offsets, coef)
        launch(kernels.gather_links, n_chunks, flat[g], d_links["chunk_start"], d_links["source"], d_links["second"],
               d_links["first_weight"], d_links["second_weight"], d_links["rest"], d_links["velocity"], reflected,
               chunk_force)
        launch(kernels.faces, face_threads, buffers[f], buffers[g], flat[g], d_links["target"], reflected,
               d_face["wall_nodes"], d_face["wall_sides"], d_face["wall_moving"], d_face["free_nodes"],
               d_links["bin_chunk_start"], chunk_force, bin_force, profile, step, average, speeds, c, w, opposite, offsets)
        if len(face.side_nodes):
            launch(kernels.free_stream, len(face.side_nodes), buffers[g], d_face["side_nodes"], step, speeds, c, w)
        launch(kernels.ends, len(face.end_positions) + len(face.dead) + n_bodies, buffers[g], d_face["end_positions"],
               d_face["end_inners"], d_face["inflow"], d_face["is_inlet"], d_face["reset_position"],
               d_face["reset_inner"], d_face["dead"], bin_force, forces, step, speeds, c, w, weights)
        state.reverse()

    # compiles the averaging kernel (on no nodes) and, in step 0, the rest, outside the clock
    launch(averaging, 0, buffers[0], buffers[1], rho_sum, u_sum, start, start, offsets, coef)
    advance(0)
    cuda.synchronize()
    started = time.perf_counter()
    for step in range(1, setup.steps):
        advance(step)
    cuda.synchronize()
    wall_time = time.perf_counter() - started

    f = buffers[state[0]].copy_to_host()
    finite = np.isfinite(f[:, position]).all(axis=tuple(a for a in range(dim + 2) if a != 1))
    return assemble_result(setup, bodies, geometry, forces.copy_to_host(), profile.copy_to_host(),
                           rho_sum.copy_to_host()[position], u_sum.copy_to_host()[:, position], finite, wall_time,
                           timed_steps=setup.steps - 1)
