"""Boundary conditions of the numba LBM on flat padded buffers [Q, Np] (tasks/cfd/fused.py).

Each function is the compiled twin of one step of tasks/cfd/faces.py or tasks/cfd/links.py, over
precomputed flat node positions. After the push pass of fused_kernel, the post-collision value
f_i*(x) sits at g[i, x + offset_i], so bounce-back and wall rows read it there; the old buffer f
still holds the pre-collision populations of the step.
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def _equilibrium(g, n, rho, u, c, w):
    """g[:, n] := w_i rho (1 + 3 c_i.u + 4.5 (c_i.u)^2 - 1.5 |u|^2)."""
    usq = 0.0
    for a in range(u.shape[0]):
        usq += u[a] * u[a]
    for i in range(c.shape[0]):
        cu = 0.0
        for a in range(u.shape[0]):
            cu += c[i, a] * u[a]
        g[i, n] = w[i] * rho * (1.0 + 3.0 * cu + 4.5 * cu * cu - 1.5 * usq)


@njit(cache=True, nogil=True)
def bounce_back(g, source, second, target, first_weight, second_weight, rest, body, velocity, bins, averaging,
                forces, profile):
    """Bouzidi / half-way links on flat g: g[target] = w1 g[source] + w2 g[second], gathered before
    any is written (links.bounce_back). Adds each link's momentum exchange (gauge: minus the rest
    exchange) times c_i to forces [B, D], and times c_ix to profile[bins] on averaging steps."""
    reflected = np.empty(source.shape[0], dtype=g.dtype)
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
def free_stream_face(g, positions, speed, c, w):
    """Nodes := f_eq(rho = 1, u = (speed, 0, ...)) (faces.set_equilibrium)."""
    u = np.zeros(c.shape[1])
    u[0] = speed
    for n in positions:
        _equilibrium(g, n, 1.0, u, c, w)


@njit(cache=True, nogil=True)
def wall_row(f, g, fluid_row, towards_wall, opposite, offsets, w, c, wall_speed):
    """Half-way wall next to fluid_row (faces.wall_row): g[opp(i), x] = f_i*(x) - 6 w_i rho c_ix u_w
    for the directions i pointing into the wall, rho from the pre-collision f."""
    for n in fluid_row:
        rho = 0.0
        if wall_speed != 0.0:
            for i in range(f.shape[0]):
                rho += f[i, n]
        for i in towards_wall:
            g[opposite[i], n] = g[i, n + offsets[i]] - 6.0 * w[i] * c[i, 0] * wall_speed * rho


@njit(cache=True, nogil=True)
def inlet(g, positions, inner, inflow, speed, c, w):
    """Inlet nodes := f_eq(rho of the next column, u = (speed inflow[k], 0, ...)) (faces.inlet)."""
    u = np.zeros(c.shape[1])
    for k in range(positions.shape[0]):
        rho = 0.0
        for i in range(g.shape[0]):
            rho += g[i, inner[k]]
        u[0] = speed * inflow[k]
        _equilibrium(g, positions[k], rho, u, c, w)


@njit(cache=True, nogil=True)
def outlet(g, positions, inner, c, w):
    """Outlet nodes := f_eq(rho = 1, u of the column before) (faces.outlet)."""
    u = np.zeros(c.shape[1])
    for k in range(positions.shape[0]):
        rho = 0.0
        u[:] = 0.0
        for i in range(g.shape[0]):
            value = g[i, inner[k]]
            rho += value
            for a in range(u.shape[0]):
                u[a] += c[i, a] * value
        for a in range(u.shape[0]):
            u[a] /= rho
        _equilibrium(g, positions[k], 1.0, u, c, w)


@njit(cache=True, nogil=True)
def reset_nodes(g, positions, w):
    """Nodes whose populations are never used (body, wall rows) := rest weights."""
    for n in positions:
        for i in range(g.shape[0]):
            g[i, n] = w[i]
