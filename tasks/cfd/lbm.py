"""The torch solver: the wind tunnel of lbm_setup with B bodies on one grid, one torch tensor
[Q, B, *grid], tensor operations per step on the CPU or a GPU. It is the reference of the fused
engines (fused.py, fused_cuda.py); engines.run_lbm picks among them.
"""
from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
import torch

from tasks.core.device import resolve_device

from . import faces
from .kernels import CollisionBuffers, StepOperators, collide, stream
from .lattice import get_lattice
from .lbm_setup import Body, LBMResult, LBMSetup, assemble_result, batch_geometry, relaxation_time
from .links import body_forces, bounce_back


def _broadcast_velocity(u: torch.Tensor, dim: int) -> torch.Tensor:
    """[D] or [D, NZ] -> broadcastable to [D, B, *face]."""
    return u.view(dim, *([1] * dim)) if u.dim() == 1 else u.view(dim, *([1] * (dim - 1)), -1)


def run_torch(setup: LBMSetup, bodies: Sequence[Body]) -> LBMResult:
    """Run the wind tunnel for all bodies at once, tensor operations per step (setup checked by the caller)."""
    lattice = get_lattice(setup.lattice)
    dim, q, n_bodies, grid = lattice.dim, lattice.q, len(bodies), tuple(setup.grid)
    dtype = getattr(torch, setup.dtype)
    device = resolve_device(setup.device)
    geometry = batch_geometry(setup, bodies, device)
    links, profile_index, rest_exchange = geometry.links, geometry.profile_index, geometry.rest_exchange
    link_cx = links.velocity[:, 0].double()
    dead_nodes = torch.as_tensor(np.flatnonzero(geometry.dead), device=device)
    weights = torch.as_tensor(lattice.w, dtype=dtype, device=device)
    rest = weights.view(q, *([1] * (dim + 1))).expand(q, n_bodies, *grid)
    f, post = rest.clone().contiguous(), torch.empty((q, n_bodies, *grid), dtype=dtype, device=device)
    f_rows, post_rows, f_flat, post_flat = f.view(q, -1), post.view(q, -1), f.view(-1), post.view(-1)
    operators = StepOperators.build(lattice, 1.0 / relaxation_time(setup), setup.collision, dtype, device)
    inflow = (faces.parabolic_profile(grid[-1], 1.0) if setup.inflow == "parabolic" else torch.ones(1)).to(dtype)
    inflow = inflow.to(device)
    x_axis = torch.zeros(dim, dtype=dtype, device=device)
    x_axis[0] = 1.0
    buffers = CollisionBuffers.allocate(dim, q, f_rows.shape[1], setup.collision, dtype, device)

    trace = torch.zeros((setup.steps, n_bodies, dim), dtype=torch.float64, device=device)
    profile = torch.zeros(n_bodies * setup.profile_bins, dtype=torch.float64, device=device)
    rho_sum = torch.zeros((n_bodies, *grid), dtype=torch.float64, device=device)
    u_sum = torch.zeros((dim, n_bodies, *grid), dtype=torch.float64, device=device)
    first_averaged = setup.steps - setup.average_steps
    started = time.perf_counter()
    for step in range(setup.steps):
        speed = faces.ramped_speed(step, setup.u_lat, setup.ramp_steps)
        rho_j = collide(f_rows, operators, out=post_rows, buffers=buffers)
        stream(post, f, lattice)
        exchange = bounce_back(post_flat, f_flat, links).double() - rest_exchange
        trace[step] = body_forces(exchange, links, n_bodies)
        if step >= first_averaged:
            profile.index_add_(0, profile_index, exchange * link_cx)
            rho_sum += rho_j[0].view(n_bodies, *grid)
            u_sum += (rho_j[1:] / rho_j[0]).view(dim, n_bodies, *grid)
        free_stream = _broadcast_velocity(speed * x_axis, dim)
        if setup.ground == "none":
            faces.set_equilibrium(f, lattice, dim - 1, 0, free_stream)
        else:
            wall_speed = speed if setup.ground == "moving" else 0.0
            faces.wall_row(post, f, lattice, True, wall_speed, rho_j[0].view(n_bodies, *grid)[..., 1])
        if setup.top == "wall":
            faces.wall_row(post, f, lattice, False, 0.0, None)
        else:
            faces.set_equilibrium(f, lattice, dim - 1, grid[-1] - 1, free_stream)
        for side in ((0, grid[1] - 1) if dim == 3 else ()):
            faces.set_equilibrium(f, lattice, 1, side, free_stream)
        inlet = speed * x_axis[:, None] * inflow[None, :] if setup.inflow == "parabolic" else speed * x_axis
        faces.inlet(f, lattice, _broadcast_velocity(inlet, dim))
        faces.outlet(f, lattice)
        f_rows[:, dead_nodes] = weights[:, None]
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    wall_time = time.perf_counter() - started
    finite = torch.isfinite(f.view(q, n_bodies, -1)).all(2).all(0)
    return assemble_result(setup, bodies, geometry, trace.cpu().numpy(), profile.cpu().numpy(),
                           rho_sum.cpu().numpy(), u_sum.cpu().numpy(), finite.cpu().numpy(), wall_time)
