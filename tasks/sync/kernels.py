"""Compiled (numba) DQ power method and DQGPM: the arithmetic of tasks/sync/dq_operator.py in
one loop over nodes per iteration.

Per node i and iteration: y_i = (1 + shift) x_i + sum_j C_ij x_j (three quaternion products per
neighbour, 8 doubles read per block), then the projection / normalization and the per-node
change are computed on the spot, so nothing of size n is allocated inside the loop. Kernels are
compiled on first use and cached on disk (`cache=True`, in this folder's __pycache__), so a
new process pays the cache load and numba's start (0.2-0.4 s); tasks/sync/aot.py builds the same
source ahead of time, without either. The numpy functions of dq_operator are the reference
(tests/sync/test_kernels.py keeps the two equal to 1e-12); the calling code is tasks/sync/native.py.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from tasks.sync.dq_operator import DQOperator, Trace
from tasks.sync.native import run_gpm, run_measurements, run_power


@njit(cache=True, nogil=True)
def _row(indptr, indices, blocks, x, i, diag, out):
    """out[:] = diag * x_i + sum_j C_ij x_j (DQ products)."""
    s0, s1, s2, s3 = diag * x[i, 0], diag * x[i, 1], diag * x[i, 2], diag * x[i, 3]
    d0, d1, d2, d3 = diag * x[i, 4], diag * x[i, 5], diag * x[i, 6], diag * x[i, 7]
    for k in range(indptr[i], indptr[i + 1]):
        j = indices[k]
        cw, cx, cy, cz = blocks[k, 0], blocks[k, 1], blocks[k, 2], blocks[k, 3]
        ew, ex, ey, ez = blocks[k, 4], blocks[k, 5], blocks[k, 6], blocks[k, 7]
        pw, px, py, pz = x[j, 0], x[j, 1], x[j, 2], x[j, 3]
        qw, qx, qy, qz = x[j, 4], x[j, 5], x[j, 6], x[j, 7]
        # standard: c_s x_s
        s0 += cw * pw - cx * px - cy * py - cz * pz
        s1 += cw * px + cx * pw + cy * pz - cz * py
        s2 += cw * py - cx * pz + cy * pw + cz * px
        s3 += cw * pz + cx * py - cy * px + cz * pw
        # dual: c_s x_d + c_d x_s
        d0 += (cw * qw - cx * qx - cy * qy - cz * qz) + (ew * pw - ex * px - ey * py - ez * pz)
        d1 += (cw * qx + cx * qw + cy * qz - cz * qy) + (ew * px + ex * pw + ey * pz - ez * py)
        d2 += (cw * qy - cx * qz + cy * qw + cz * qx) + (ew * py - ex * pz + ey * pw + ez * px)
        d3 += (cw * qz + cx * qy - cy * qx + cz * qw) + (ew * pz + ex * py - ey * px + ez * pw)
    out[0], out[1], out[2], out[3] = s0, s1, s2, s3
    out[4], out[5], out[6], out[7] = d0, d1, d2, d3


@njit(cache=True, nogil=True)
def _project_into(a, dst, i):
    """dst[i] = P(a): a_s/|a_s| + eps (a_d/|a_s| - a_s <a_s, a_d>/|a_s|^3)."""
    norm = np.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2] + a[3] * a[3])
    inner = a[0] * a[4] + a[1] * a[5] + a[2] * a[6] + a[3] * a[7]
    cube = norm**3
    for c in range(4):
        dst[i, c] = a[c] / norm
        dst[i, 4 + c] = a[4 + c] / norm - a[c] * inner / cube


@njit(cache=True, nogil=True)
def _change(new, old, i):
    """(||s_i' - s_i||^2, ||d_i' - d_i||^2)."""
    dr = 0.0
    dt = 0.0
    for c in range(4):
        dr += (new[i, c] - old[i, c]) ** 2
        dt += (new[i, 4 + c] - old[i, 4 + c]) ** 2
    return dr, dt


@njit(cache=True, nogil=True)
def _record_and_stop(it, dr_max, dt_max, rot_tol, trans_abs, rot_hist, trans_hist):
    """Record iteration it's largest per-node changes (rotation, translation units) and say whether both met their tolerance."""
    rot_hist[it] = np.sqrt(dr_max)
    trans_hist[it] = 2.0 * np.sqrt(dt_max)
    return rot_hist[it] <= rot_tol and trans_hist[it] <= trans_abs


@njit(cache=True, nogil=True)
def gpm_kernel(indptr, indices, blocks, x, shift, rot_tol, trans_abs, max_iter, rot_hist, trans_hist):
    """DQGPM in place on x (n, 8); returns (iterations, converged)."""
    n = x.shape[0]
    cur = x.copy()
    new = np.empty_like(x)
    y = np.empty(8)
    converged = False
    it = 0
    while it < max_iter:
        dr_max = 0.0
        dt_max = 0.0
        for i in range(n):
            _row(indptr, indices, blocks, cur, i, 1.0 + shift, y)
            _project_into(y, new, i)
            dr, dt = _change(new, cur, i)
            dr_max = max(dr_max, dr)
            dt_max = max(dt_max, dt)
        stop = _record_and_stop(it, dr_max, dt_max, rot_tol, trans_abs, rot_hist, trans_hist)
        cur, new = new, cur
        it += 1
        if stop:
            converged = True
            break
    x[:, :] = cur
    return it, converged


@njit(cache=True, nogil=True)
def power_kernel(indptr, indices, blocks, v, p, rot_tol, trans_abs, max_iter, rot_hist, trans_hist):
    """DQ power method in place on v (n, 8, already normalized) and p = P(v); returns
    (iterations, converged)."""
    n = v.shape[0]
    cur = v.copy()
    y = np.empty_like(v)
    row = np.empty(8)
    converged = False
    it = 0
    while it < max_iter:
        ns = 0.0
        inner = 0.0
        for i in range(n):
            _row(indptr, indices, blocks, cur, i, 1.0, row)
            for c in range(8):
                y[i, c] = row[c]
            for c in range(4):
                ns += row[c] * row[c]
                inner += row[c] * row[4 + c]
        norm = np.sqrt(ns)
        cube = norm**3
        dr_max = 0.0
        dt_max = 0.0
        for i in range(n):
            for c in range(4):
                cur[i, c] = y[i, c] / norm
                cur[i, 4 + c] = y[i, 4 + c] / norm - y[i, c] * inner / cube
            for c in range(8):
                row[c] = cur[i, c]
            _project_into(row, y, i)  # y now holds P(v) for node i; compare with p
            dr, dt = _change(y, p, i)
            dr_max = max(dr_max, dr)
            dt_max = max(dt_max, dt)
            for c in range(8):
                p[i, c] = y[i, c]
        stop = _record_and_stop(it, dr_max, dt_max, rot_tol, trans_abs, rot_hist, trans_hist)
        it += 1
        if stop:
            converged = True
            break
    v[:, :] = cur
    return it, converged


def power_numba(op: DQOperator, v: np.ndarray, rot_tol: float, trans_tol: float, max_iter: int) -> Trace:
    """Compiled (JIT) twin of dq_operator.power_numpy."""
    return run_power(power_kernel, op, v, rot_tol, trans_tol, max_iter)


def gpm_numba(op: DQOperator, x: np.ndarray, shift: float, rot_tol: float, trans_tol: float,
              max_iter: int) -> Trace:
    """Compiled (JIT) twin of dq_operator.gpm_numpy."""
    return run_gpm(gpm_kernel, op, x, shift, rot_tol, trans_tol, max_iter)


# ---------------------------------------------------------------- measurements (spec §3.2 steps 1-2)

@njit(cache=True, nogil=True)
def udq_from_matrices(Z):
    """UDQs (m, 8) of homogeneous poses Z (m, 4, 4): Shepperd's quaternion (w >= 0) and
    d = (1/2)(0, t) s, the arithmetic of dualquat.dq_from_matrix."""
    m = Z.shape[0]
    out = np.empty((m, 8))
    outer = np.empty((4, 4))
    for k in range(m):
        m00, m01, m02 = Z[k, 0, 0], Z[k, 0, 1], Z[k, 0, 2]
        m10, m11, m12 = Z[k, 1, 0], Z[k, 1, 1], Z[k, 1, 2]
        m20, m21, m22 = Z[k, 2, 0], Z[k, 2, 1], Z[k, 2, 2]
        outer[0, 0], outer[0, 1], outer[0, 2], outer[0, 3] = 1 + m00 + m11 + m22, m21 - m12, m02 - m20, m10 - m01
        outer[1, 0], outer[1, 1], outer[1, 2], outer[1, 3] = m21 - m12, 1 + m00 - m11 - m22, m01 + m10, m02 + m20
        outer[2, 0], outer[2, 1], outer[2, 2], outer[2, 3] = m02 - m20, m01 + m10, 1 - m00 + m11 - m22, m12 + m21
        outer[3, 0], outer[3, 1], outer[3, 2], outer[3, 3] = m10 - m01, m02 + m20, m12 + m21, 1 - m00 - m11 + m22
        best = 0
        for r in range(1, 4):
            if outer[r, r] > outer[best, best]:
                best = r
        norm = np.sqrt(outer[best, 0] ** 2 + outer[best, 1] ** 2 + outer[best, 2] ** 2 + outer[best, 3] ** 2)
        sign = -1.0 if outer[best, 0] / norm < 0 else 1.0
        w, x, y, z = (sign * outer[best, 0] / norm, sign * outer[best, 1] / norm,
                      sign * outer[best, 2] / norm, sign * outer[best, 3] / norm)
        tx, ty, tz = Z[k, 0, 3], Z[k, 1, 3], Z[k, 2, 3]
        out[k, 0], out[k, 1], out[k, 2], out[k, 3] = w, x, y, z
        out[k, 4] = 0.5 * (-tx * x - ty * y - tz * z)
        out[k, 5] = 0.5 * (tx * w + ty * z - tz * y)
        out[k, 6] = 0.5 * (-tx * z + ty * w + tz * x)
        out[k, 7] = 0.5 * (tx * y - ty * x + tz * w)
    return out


@njit(cache=True, nogil=True)
def sign_fix_kernel(n, edges, z):
    """The sign fix of measurement.measurement_dqs, in place on z (m, 8): y_0 = 1, along a BFS tree
    from node 0 y_j = z_ij* y_i (z_ji y_i for an edge stored the other way round), normalized with
    w >= 0; then z_ij is negated where <s(z_ij), s(y_i y_j*)> < 0. Returns the nodes reached."""
    m = edges.shape[0]
    ptr = np.zeros(n + 1, dtype=np.int64)
    for k in range(m):
        ptr[edges[k, 0] + 1] += 1
        ptr[edges[k, 1] + 1] += 1
    for i in range(n):
        ptr[i + 1] += ptr[i]
    fill = ptr[:-1].copy()
    neighbour = np.empty(2 * m, dtype=np.int64)
    edge_of = np.empty(2 * m, dtype=np.int64)
    for k in range(m):
        a, b = edges[k, 0], edges[k, 1]
        neighbour[fill[a]], edge_of[fill[a]] = b, k
        fill[a] += 1
        neighbour[fill[b]], edge_of[fill[b]] = a, k
        fill[b] += 1
    y = np.zeros((n, 4))
    y[0, 0] = 1.0
    seen = np.zeros(n, dtype=np.bool_)
    seen[0] = True
    queue = np.empty(n, dtype=np.int64)
    queue[0] = 0
    head, tail = 0, 1
    while head < tail:
        i = queue[head]
        head += 1
        for a in range(ptr[i], ptr[i + 1]):
            j = neighbour[a]
            if seen[j]:
                continue
            k = edge_of[a]
            cw, cx, cy, cz = z[k, 0], z[k, 1], z[k, 2], z[k, 3]
            if edges[k, 0] == i:  # stored (parent, child): step z_ij*
                cx, cy, cz = -cx, -cy, -cz
            pw, px, py, pz = y[i, 0], y[i, 1], y[i, 2], y[i, 3]
            w = cw * pw - cx * px - cy * py - cz * pz
            x = cw * px + cx * pw + cy * pz - cz * py
            v = cw * py - cx * pz + cy * pw + cz * px
            u = cw * pz + cx * py - cy * px + cz * pw
            norm = np.sqrt(w * w + x * x + v * v + u * u)
            sign = -1.0 if w / norm < 0 else 1.0
            y[j, 0], y[j, 1], y[j, 2], y[j, 3] = sign * w / norm, sign * x / norm, sign * v / norm, sign * u / norm
            seen[j] = True
            queue[tail] = j
            tail += 1
    for k in range(m):
        a, b = edges[k, 0], edges[k, 1]
        pw, px, py, pz = y[a, 0], y[a, 1], y[a, 2], y[a, 3]
        qw, qx, qy, qz = y[b, 0], -y[b, 1], -y[b, 2], -y[b, 3]  # y_b*
        rw = pw * qw - px * qx - py * qy - pz * qz
        rx = pw * qx + px * qw + py * qz - pz * qy
        ry = pw * qy - px * qz + py * qw + pz * qx
        rz = pw * qz + px * qy - py * qx + pz * qw
        if z[k, 0] * rw + z[k, 1] * rx + z[k, 2] * ry + z[k, 3] * rz < 0:
            for c in range(8):
                z[k, c] = -z[k, c]
    return tail


def measurement_dqs_numba(n: int, edges: np.ndarray, Z: np.ndarray, dq: np.ndarray | None) -> np.ndarray:
    """Compiled (JIT) twin of measurement.measurement_dqs for validated edges (see native.run_measurements)."""
    return run_measurements(udq_from_matrices, sign_fix_kernel, n, edges, Z, dq)
