"""Boundary conditions of the numba LBM on flat padded buffers [Q, Np] (tasks/cfd/fused.py).

Each function is the compiled twin of one step of tasks/cfd/faces.py or tasks/cfd/links.py, over
precomputed flat node positions; `apply_boundaries` runs them all in the torch solver's order and
is what the compiled time loop (fused_kernel.time_loop_source) calls after each collide + push pass.
After that pass the post-collision value f_i*(x) sits at g[i, x + offset_i], so bounce-back and
wall rows read it there; the old buffer f still holds the pre-collision populations of the step.
The solver's rows keep x contiguous (fused.PaddedLayout, x_innermost), so the ground, top, side and
dead nodes come as runs [R, 2] (first, stop) of contiguous flat positions (`fused.node_runs`): a run
is a slice of every direction row, so those loops stream memory and vectorise. The inlet and outlet
columns, across the x rows, come as node lists. Every node's arithmetic is the same expression in the
same order as before the runs (a data set's labels made before and after kept their md5).
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def _equilibrium_rows(g, positions, rho, u, c, w):
    """g[i, positions[k]] := w_i rho[k] (1 + 3 c_i.u_k + 4.5 (c_i.u_k)^2 - 1.5 |u_k|^2), u [D, K].
    Direction rows outer, nodes inner (so every function here): a face's nodes are strided in
    memory, and writing the Q rows of one node before the next touched Q cache lines per node."""
    n = positions.shape[0]
    usq = np.zeros(n)
    for a in range(u.shape[0]):
        for k in range(n):
            usq[k] += u[a, k] * u[a, k]
    cu = np.empty(n)
    for i in range(c.shape[0]):
        cu[:] = 0.0
        for a in range(u.shape[0]):
            for k in range(n):
                cu[k] += c[i, a] * u[a, k]
        row = g[i]
        for k in range(n):
            row[positions[k]] = w[i] * rho[k] * (1.0 + 3.0 * cu[k] + 4.5 * cu[k] * cu[k] - 1.5 * usq[k])


@njit(cache=True, nogil=True)
def _moments(g, positions, c, with_velocity):
    """(rho [K], j [D, K]) at positions, each the directions summed in order from 0 (j only with_velocity,
    else zeros), one gather of each population into a contiguous work row."""
    n, dim = positions.shape[0], c.shape[1]
    rho, j, values = np.zeros(n), np.zeros((dim, n)), np.empty(n)
    for i in range(g.shape[0]):
        row = g[i]
        for k in range(n):
            values[k] = row[positions[k]]
            rho[k] += values[k]
        for a in range(dim if with_velocity else 0):
            if c[i, a] != 0.0:  # a zero term adds +0.0: skipped, no sum's bits move
                for k in range(n):
                    j[a, k] += c[i, a] * values[k]
    return rho, j


@njit(cache=True, nogil=True)
def bounce_back(g, source, second, target, first_weight, second_weight, rest, body, velocity, bins, reflected,
                averaging, forces, profile):
    """Bouzidi / half-way links on flat g: g[target] = w1 g[source] + w2 g[second], gathered (into
    the work array `reflected` [L]) before any is written (links.bounce_back). Adds each link's
    momentum exchange (gauge: minus the rest exchange) times c_i to forces [B, D], and times c_ix to
    profile[bins] on averaging steps."""
    for k in range(source.shape[0]):
        hitting = g[source[k]]
        reflected[k] = first_weight[k] * hitting + second_weight[k] * g[second[k]]
        exchange = np.float64(hitting + reflected[k]) - rest[k]
        for a in range(velocity.shape[1]):
            forces[body[k], a] += exchange * velocity[k, a]
        if averaging:
            profile[bins[k]] += exchange * velocity[k, 0]
    for k in range(source.shape[0]):
        g[target[k]] = reflected[k]


@njit(cache=True, nogil=True)
def _fill_runs(g, runs, values):
    """g[i, run] := values[i] on every run."""
    for i in range(g.shape[0]):
        row, value = g[i], values[i]
        for r in range(runs.shape[0]):
            row[runs[r, 0]:runs[r, 1]] = value


@njit(cache=True, nogil=True)
def free_stream_face(g, runs, speed, c, w):
    """Runs := f_eq(rho = 1, u = (speed, 0, ...)) (faces.set_equilibrium): the same Q values at
    every node, computed once."""
    u = np.zeros((c.shape[1], 1))
    u[0, 0] = speed
    values = np.empty((c.shape[0], 1), dtype=g.dtype)
    _equilibrium_rows(values, np.zeros(1, dtype=np.int64), np.ones(1), u, c, w)
    _fill_runs(g, runs, values[:, 0])


@njit(cache=True, nogil=True)
def wall_row(f, g, fluid_runs, towards_wall, opposite, offsets, w, c, wall_speed):
    """Half-way wall next to the fluid row's runs (faces.wall_row): g[opp(i), x] = f_i*(x) - 6 w_i rho c_ix u_w
    for the directions i pointing into the wall, rho from the pre-collision f; run by run, so that the run's
    rho (a work row) and its populations stay in cache."""
    longest = 0
    for r in range(fluid_runs.shape[0]):
        longest = max(longest, fluid_runs[r, 1] - fluid_runs[r, 0])
    rho = np.zeros(longest)
    for r in range(fluid_runs.shape[0]):
        first, stop = fluid_runs[r, 0], fluid_runs[r, 1]
        if wall_speed != 0.0:
            rho[:] = 0.0
            for i in range(f.shape[0]):
                row = f[i][first:stop]  # slices indexed from 0: no wrap-around select, so the loops vectorise
                for k in range(stop - first):
                    rho[k] += row[k]
        for i in towards_wall:
            source, target = g[i][first + offsets[i]:stop + offsets[i]], g[opposite[i]][first:stop]
            if wall_speed == 0.0:  # f - 0 rho is f, bit for bit
                target[:] = source
                continue
            correction = 6.0 * w[i] * c[i, 0] * wall_speed
            for k in range(stop - first):
                target[k] = source[k] - correction * rho[k]


@njit(cache=True, nogil=True)
def inlet(g, positions, inner, inflow, speed, c, w):
    """Inlet nodes := f_eq(rho of the next column, u = (speed inflow[k], 0, ...)) (faces.inlet)."""
    u = np.zeros((c.shape[1], positions.shape[0]))
    for k in range(positions.shape[0]):
        u[0, k] = speed * inflow[k]
    _equilibrium_rows(g, positions, _moments(g, inner, c, False)[0], u, c, w)


@njit(cache=True, nogil=True)
def outlet(g, positions, inner, c, w):
    """Outlet nodes := f_eq(rho = 1, u of the column before) (faces.outlet)."""
    rho, u = _moments(g, inner, c, True)
    for a in range(c.shape[1]):
        for k in range(positions.shape[0]):
            u[a, k] /= rho[k]
    _equilibrium_rows(g, positions, np.ones(positions.shape[0]), u, c, w)


@njit(cache=True, nogil=True)
def reset_nodes(g, runs, w):
    """Runs of nodes whose populations are never used (body, wall rows) := rest weights."""
    _fill_runs(g, runs, w)


GROUND_NONE, GROUND_WALL, GROUND_MOVING = 0, 1, 2  # `ground` codes of apply_boundaries (LBMSetup.ground)


@njit(cache=True, nogil=True)
def apply_boundaries(f, g, speed, averaging, forces, profile, links, nodes, lattice, ground, top_wall):
    """Every boundary condition of one step, in run_torch's order: body links, bottom, top, 3D
    sides, inlet, outlet, reset of dead nodes. links: bounce_back's arrays from `source` to
    `reflected`; nodes: (bottom, top, bottom_fluid, top_fluid, sides) runs [R, 2], (inlet, inlet_inner,
    outlet, outlet_inner) flat positions, inflow (the inlet profile per inlet node), dead runs (sides
    empty in 2D); lattice: (offsets, c, w, opposite, down, up); ground: a GROUND_* code."""
    bottom, top, bottom_fluid, top_fluid, sides, inlet_nodes, inlet_inner, outlet_nodes, outlet_inner, inflow, dead = nodes
    offsets, c, w, opposite, down, up = lattice
    bounce_back(g.reshape(-1), *links, averaging, forces, profile)
    if ground == GROUND_NONE:
        free_stream_face(g, bottom, speed, c, w)
    else:
        wall_row(f, g, bottom_fluid, down, opposite, offsets, w, c, speed if ground == GROUND_MOVING else 0.0)
    if top_wall:
        wall_row(f, g, top_fluid, up, opposite, offsets, w, c, 0.0)
    else:
        free_stream_face(g, top, speed, c, w)
    free_stream_face(g, sides, speed, c, w)
    inlet(g, inlet_nodes, inlet_inner, inflow, speed, c, w)
    outlet(g, outlet_nodes, outlet_inner, c, w)
    reset_nodes(g, dead, w)
