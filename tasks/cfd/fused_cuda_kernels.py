"""CUDA kernels (numba.cuda) of the GPU LBM step, on the padded flat buffers of tasks/cfd/fused.py.

A step is four launches (five in 3D), each a barrier the next one needs:
1. `fused_kernel`: collide + push + running averages, one thread per node of the span; the node
   update is the CPU kernel's generated source (fused_kernel.node_update_lines), indexed for CUDA.
2. `gather_links`: links sorted by (body, profile bin) and cut into chunks of at most
   LINKS_PER_CHUNK; one thread per chunk reads its bounce-back populations (all of them are read
   before launch 3 writes any) and sums the momentum exchange into its own float64 slot.
3. `faces`: link writes, wall rows (bottom, top), free-stream rows, and one thread per bin summing
   its chunks (and, on averaging steps, adding the bin's drag to the profile); every thread writes
   populations no other thread of the launch reads or writes.
4. (3D) `free_stream` on the side faces: after the wall rows, which read the side faces' row 0.
5. `ends`: inlet and outlet (they read columns 1 and NX-2, so after 3-4), the reset of dead nodes
   in those columns by the thread that read them, and of all other dead nodes; one thread per body
   summing its bins into forces [steps, B, D].
Sums run in a fixed order at every level and no thread adds into another's slot (no atomics), so
the same inputs give the same bits; the three levels keep each thread's serial work short (at
most LINKS_PER_CHUNK links, a bin's chunks, K bins) where one thread per bin would walk thousands.
"""
from __future__ import annotations

from functools import cache

from numba import cuda

from .fused_kernel import coefficient_lines, node_update_lines
from .lattice import get_lattice

THREADS_PER_BLOCK = 64  # 32 resident blocks per SM fill a Hopper SM; fewer idle threads in the simulator
LINKS_PER_CHUNK = 32


def launch(kernel, threads: int, *args) -> None:
    """kernel over `threads` threads (at least one block: the kernels return beyond their work)."""
    kernel[max(1, -(-threads // THREADS_PER_BLOCK)), THREADS_PER_BLOCK](*args)


@cache
def fused_kernel(lattice_name: str, collision: str, averaging: bool):
    """`step(f, g, rho_sum, u_sum, start, stop, offsets, coef)`: node n in start..stop-1 (one thread
    each) collides f[:, n] and pushes f*_i to g[i, n + offsets[i]]; on averaging steps it adds rho
    and u to rho_sum[n] and u_sum[:, n]. Coefficients as in fused_kernel.coefficients."""
    q = get_lattice(lattice_name).q
    lines = ["def step(f, g, rho_sum, u_sum, start, stop, offsets, coef):",
             "    n = start + cuda.grid(1)",
             "    if n >= stop:",
             "        return"]
    lines += [f"    o{i} = offsets[{i}]" for i in range(q)]
    lines += [f"    {line}" for line in coefficient_lines(lattice_name, collision)]
    lines += [f"    {line}" for line in node_update_lines(lattice_name, collision, averaging, load="f[{i}, n]",
                                                           store="g[{i}, n + o{i}]", rho_sum="rho_sum[n]",
                                                           u_sum="u_sum[{a}, n]")]
    namespace = {"cuda": cuda}
    exec(compile("\n".join(lines) + "\n", f"<cuda lbm step {lattice_name} {collision} {averaging}>", "exec"), namespace)
    return cuda.jit(namespace["step"])


@cuda.jit(device=True)
def _equilibrium(g, n, rho, u0, u1, u2, c, w):
    """g[:, n] := w_i rho (1 + 3 c_i.u + 4.5 (c_i.u)^2 - 1.5 |u|^2), u = (u0, u1[, u2]) on the D axes."""
    three = c.shape[1] == 3
    usq = u0 * u0 + u1 * u1
    if three:
        usq += u2 * u2
    for i in range(c.shape[0]):
        cu = c[i, 0] * u0 + c[i, 1] * u1
        if three:
            cu += c[i, 2] * u2
        g[i, n] = w[i] * rho * (1.0 + 3.0 * cu + 4.5 * cu * cu - 1.5 * usq)


@cuda.jit(device=True)
def _rest(g, n, weights):
    for i in range(g.shape[0]):
        g[i, n] = weights[i]


@cuda.jit
def gather_links(g_flat, chunk_start, source, second, first_weight, second_weight, rest, velocity, reflected,
                 chunk_force):
    """Links of chunk c: chunk_start[c]..chunk_start[c + 1] - 1. reflected[k] = w1 g[source] + w2 g[second];
    chunk_force[c, a] = sum over the chunk's links of (exchange - rest exchange) c_a, in link order."""
    chunk = cuda.grid(1)
    if chunk >= chunk_force.shape[0]:
        return
    three = velocity.shape[1] == 3
    s0, s1, s2 = 0.0, 0.0, 0.0
    for k in range(chunk_start[chunk], chunk_start[chunk + 1]):
        hitting = g_flat[source[k]]
        value = first_weight[k] * hitting + second_weight[k] * g_flat[second[k]]
        reflected[k] = value
        exchange = (hitting + value) - rest[k]  # the population sum in the buffer's precision, as on the CPU
        s0 += exchange * velocity[k, 0]
        s1 += exchange * velocity[k, 1]
        if three:
            s2 += exchange * velocity[k, 2]
    chunk_force[chunk, 0] = s0
    chunk_force[chunk, 1] = s1
    if three:
        chunk_force[chunk, 2] = s2


@cuda.jit(device=True)
def _wall(f, g, n, side, wall_speed, c, w, opposite, offsets):
    """Half-way wall next to fluid node n (fused_boundaries.wall_row): g[opp(i), n] = f_i*(n) - 6 w_i rho c_ix u_w
    for the directions i with c_iz = side, rho from the pre-collision f."""
    rho = 0.0
    if wall_speed != 0.0:
        for i in range(f.shape[0]):
            rho += f[i, n]
    vertical = c.shape[1] - 1
    for i in range(c.shape[0]):
        if c[i, vertical] == side:
            g[opposite[i], n] = g[i, n + offsets[i]] - 6.0 * w[i] * c[i, 0] * wall_speed * rho


@cuda.jit
def faces(f, g, g_flat, target, reflected, wall_nodes, wall_sides, wall_moving, free_nodes, bin_chunk_start,
          chunk_force, bin_force, profile, step, averaging, speeds, c, w, opposite, offsets):
    """Thread ranges, in order: link writes g[target] = reflected; wall-row nodes; free-stream row nodes
    (f_eq at rho 1 and the ramped speed); one thread per profile bin summing its chunks into bin_force
    and, on averaging steps, adding the bin's drag to profile."""
    t = cuda.grid(1)
    speed = speeds[step]
    if t < target.shape[0]:
        g_flat[target[t]] = reflected[t]
        return
    t -= target.shape[0]
    if t < wall_nodes.shape[0]:
        _wall(f, g, wall_nodes[t], wall_sides[t], speed * wall_moving[t], c, w, opposite, offsets)
        return
    t -= wall_nodes.shape[0]
    if t < free_nodes.shape[0]:
        _equilibrium(g, free_nodes[t], 1.0, speed, 0.0, 0.0, c, w)
        return
    t -= free_nodes.shape[0]
    if t < bin_force.shape[0]:
        for a in range(bin_force.shape[1]):
            total = 0.0
            for chunk in range(bin_chunk_start[t], bin_chunk_start[t + 1]):
                total += chunk_force[chunk, a]
            bin_force[t, a] = total
        if averaging:
            profile[t] += bin_force[t, 0]


@cuda.jit
def free_stream(g, nodes, step, speeds, c, w):
    """nodes := f_eq(rho = 1, u = (ramped speed, 0, 0)) (the 3D side faces)."""
    t = cuda.grid(1)
    if t < nodes.shape[0]:
        _equilibrium(g, nodes[t], 1.0, speeds[step], 0.0, 0.0, c, w)


@cuda.jit
def ends(g, positions, inners, inflow, is_inlet, reset_position, reset_inner, dead, bin_force, forces, step, speeds,
         c, w, weights):
    """One thread per inlet/outlet node: inlet f_eq(rho of the inner node, u = (speed inflow, 0, 0)), outlet
    f_eq(rho = 1, u of the inner node); then rest weights where the node or its inner node is dead. Then one
    thread per remaining dead node (not in the first or last two columns), then one per body summing its K bins
    into forces[step, b]."""
    t = cuda.grid(1)
    if t < positions.shape[0]:
        node, inner = positions[t], inners[t]
        three = c.shape[1] == 3
        rho, u0, u1, u2 = 0.0, 0.0, 0.0, 0.0
        for i in range(g.shape[0]):
            value = g[i, inner]
            rho += value
            u0 += c[i, 0] * value
            u1 += c[i, 1] * value
            if three:
                u2 += c[i, 2] * value
        if is_inlet[t]:
            _equilibrium(g, node, rho, speeds[step] * inflow[t], 0.0, 0.0, c, w)
        else:
            _equilibrium(g, node, 1.0, u0 / rho, u1 / rho, u2 / rho, c, w)
        if reset_position[t]:
            _rest(g, node, weights)
        if reset_inner[t]:
            _rest(g, inner, weights)
        return
    t -= positions.shape[0]
    if t < dead.shape[0]:
        _rest(g, dead[t], weights)
        return
    t -= dead.shape[0]
    if t < forces.shape[1]:
        bins = bin_force.shape[0] // forces.shape[1]
        for a in range(forces.shape[2]):
            total = 0.0
            for k in range(t * bins, (t + 1) * bins):
                total += bin_force[k, a]
            forces[step, t, a] = total
