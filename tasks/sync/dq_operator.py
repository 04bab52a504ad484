"""The DQ measurement matrix C as one fused operator, and the two iterations that apply it.

C (spec §3.2) is kept as its off-diagonal DQ blocks in compressed-row form, built once:
row i holds C_ij (8 doubles: standard | dual part) for each neighbour j, and C_ii = 1 is implicit.
The state is one (n, 8) array holding both parts of every node, so an iteration is one fused
mat-vec over it,

    (C x)_i = x_i + sum_j C_ij x_j,   C_ij x_j = c_s x_s + eps (c_s x_d + c_d x_s)   (DQ product),

instead of three real 4n x 4n mat-vecs and the concatenations between them.

Stopping rule (the problem's units, per node; the caller picks the values):
an iteration has converged when every node's rotation part moved by at most `rot_tol` and its
translation part by at most `trans_tol` x the scene scale,

    max_i ||s_i^{k+1} - s_i^k|| <= rot_tol,     max_i 2 ||d_i^{k+1} - d_i^k|| <= trans_tol * scale,

with s_i a unit quaternion (a change of e is a rotation of about 2e rad) and 2 d_i ~ t_i s_i, so
2 ||delta d_i|| is the translation change in scene units (exact up to the rotation change times
|t_i|). `scale` is the RMS length of the measured relative translations: it makes the rule
invariant to the scene's units, so scaling every translation by c changes no stopping decision.
The power method tests the projected iterate P(v_k) (what the stage hands on), not v_k itself,
whose per-node entries shrink like 1/sqrt(n).

This module is the numpy reference of both iterations; `tasks/sync/kernels.py` compiles the same
arithmetic with numba (the default engine), and a test keeps the two equal.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy.sparse import bsr_matrix

from tasks.sync.dualquat import dq_project, dq_vector_normalize
from tasks.sync.measurement import check_edges
from tasks.sync.quaternion import qleft

_CONJ = np.array([1.0, -1.0, -1.0, -1.0] * 2)  # a* = a_s* + eps a_d*


@dataclass(frozen=True)
class DQOperator:
    """C in compressed-row form: node i's neighbours are indices[indptr[i]:indptr[i+1]] with
    blocks (DQs C_ij, (nnz, 8)) alongside; C_ii = 1 is implicit. scale: RMS measured relative
    translation (1 where every translation is zero), the unit of the translation stopping rule."""

    n: int
    indptr: np.ndarray
    indices: np.ndarray
    blocks: np.ndarray
    scale: float

    @cached_property
    def matrix(self) -> bsr_matrix:
        """C as one real 8n x 8n block-sparse matrix acting on x.reshape(-1) (numpy reference):
        block (i, j) = [[L(c_s), 0], [L(c_d), L(c_s)]], identity blocks on the diagonal."""
        rows = np.repeat(np.arange(self.n), np.diff(self.indptr))
        L_s, L_d = qleft(self.blocks[:, :4]), qleft(self.blocks[:, 4:])
        off = np.zeros((len(self.blocks), 8, 8))
        off[:, :4, :4] = L_s
        off[:, 4:, 4:] = L_s
        off[:, 4:, :4] = L_d
        all_rows = np.concatenate([rows, np.arange(self.n)])
        all_cols = np.concatenate([self.indices, np.arange(self.n)])
        all_blocks = np.concatenate([off, np.broadcast_to(np.eye(8), (self.n, 8, 8))])
        order = np.lexsort((all_cols, all_rows))
        indptr = self.indptr + np.arange(self.n + 1)  # one diagonal block per row
        return bsr_matrix((np.ascontiguousarray(all_blocks[order]), all_cols[order], indptr),
                          shape=(8 * self.n, 8 * self.n))

    def matvec(self, x: np.ndarray) -> np.ndarray:
        """C x for a stacked DQ vector x (n, 8) (numpy reference)."""
        return (self.matrix @ x.reshape(-1)).reshape(self.n, 8)


def build_operator(n: int, edges: np.ndarray, dqs: np.ndarray, *, checked: bool = False) -> DQOperator:
    """The operator of the Hermitian C: C_ij = dqs[k] for edges[k] = (i, j), C_ji = C_ij*,
    C_ii = 1, no weights (the same C as measurement.build_measurement_matrix). checked=True: the
    edges already passed measurement.check_edges."""
    edges = np.asarray(edges, dtype=np.int64) if checked else check_edges(n, edges)
    dqs = np.asarray(dqs, dtype=float)
    if dqs.shape != (len(edges), 8):
        raise ValueError(f"need one 8-vector DQ per edge, got {dqs.shape} for {len(edges)} edges")
    rows = np.concatenate([edges[:, 0], edges[:, 1]])
    cols = np.concatenate([edges[:, 1], edges[:, 0]])
    order = np.argsort(rows * n + cols)  # row-major, columns ascending within a row (pairs are distinct)
    blocks = np.concatenate([dqs, dqs * _CONJ])[order]
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
    # |t_ij| = 2 |d_ij| / |s_ij| for the DQ of a pose scaled by |s_ij| (1 for a UDQ).
    squares = np.einsum("ij,ij->i", dqs[:, 4:], dqs[:, 4:]) / np.einsum("ij,ij->i", dqs[:, :4], dqs[:, :4])
    scale = float(2.0 * np.sqrt(np.mean(squares))) if len(dqs) else 0.0
    return DQOperator(n=n, indptr=indptr, indices=np.ascontiguousarray(cols[order], dtype=np.int64),
                      blocks=blocks, scale=scale if scale > 0 else 1.0)


@dataclass
class Trace:
    """What an iteration returns: the final state, the per-iteration largest per-node changes
    (rotation part, translation part in scene units) and whether the stopping rule held."""

    x: np.ndarray
    rotation: list[float]
    translation: list[float]
    converged: bool
    projected: np.ndarray | None = None  # power method: P(x), the estimate it hands on

    @property
    def iterations(self) -> int:
        return len(self.rotation)


def node_changes(new: np.ndarray, old: np.ndarray) -> tuple[float, float]:
    """(max_i ||s_i' - s_i||, max_i 2 ||d_i' - d_i||) for stacked DQ vectors (n, 8)."""
    diff = new - old
    rotation = np.sqrt(np.max(np.sum(diff[:, :4] ** 2, axis=1)))
    translation = 2.0 * np.sqrt(np.max(np.sum(diff[:, 4:] ** 2, axis=1)))
    return float(rotation), float(translation)


def _iterate(step, state: np.ndarray, pose, rot_tol: float, trans_abs: float, max_iter: int):
    """state <- step(state) until the per-node change of pose(state) meets both tolerances (module
    docstring); returns (state, its pose, rotation changes, translation changes, converged)."""
    p = pose(state)
    rotation, translation, converged = [], [], False
    for _ in range(max_iter):
        state = step(state)
        p_new = pose(state)
        dr, dt = node_changes(p_new, p)
        rotation.append(dr)
        translation.append(dt)
        p = p_new
        if dr <= rot_tol and dt <= trans_abs:
            converged = True
            break
    return state, p, rotation, translation, converged


def power_numpy(op: DQOperator, v: np.ndarray, rot_tol: float, trans_tol: float, max_iter: int) -> Trace:
    """DQ power method v <- C v / ||C v|| (dual-number normalization), stopping on the change of
    P(v) per node (module docstring); trans_tol is relative to op.scale. v: (n, 8) start."""
    v, p, rotation, translation, converged = _iterate(lambda v: dq_vector_normalize(op.matvec(v)), dq_vector_normalize(v),
                                                      dq_project, rot_tol, trans_tol * op.scale, max_iter)
    return Trace(v, rotation, translation, converged, projected=p)


def gpm_numpy(op: DQOperator, x: np.ndarray, shift: float, rot_tol: float, trans_tol: float,
              max_iter: int) -> Trace:
    """DQGPM x <- P((C + shift I) x) until the per-node stopping rule holds (module docstring)."""
    x, _, rotation, translation, converged = _iterate(lambda x: dq_project(op.matvec(x) + shift * x),
                                                      np.array(x, dtype=float), lambda x: x, rot_tol,
                                                      trans_tol * op.scale, max_iter)
    return Trace(x, rotation, translation, converged)
