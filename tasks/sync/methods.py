"""SE(3) synchronization methods: the DQ pipeline (spec se3_sync §3.3-3.4) and baselines (§4).

Every method is `method(graph, **options) -> SyncResult`; wall_time covers matrix build, solver
and rounding / pose extraction (perf_counter), not input validation.
"""
from __future__ import annotations

from time import perf_counter

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.linalg import eigs

from tasks.sync.dualquat import dq_project, dq_vector_normalize, norm_2r, pose_from_dq
from tasks.sync.graph import PoseGraph, Poses, SyncResult, connected_components
from tasks.sync.measurement import (
    align_node_signs,
    bfs_tree,
    block_matrix,
    build_measurement_matrix,
    check_edges,
    dq_matvec,
    measurement_dqs,
)
from tasks.sync.metrics import pose_errors, project_so3


def _connected_edges(graph: PoseGraph) -> np.ndarray:
    """Validated edges of a connected graph; ValueError otherwise (no gauge ties the parts)."""
    edges = check_edges(graph.n, graph.edges)
    components = connected_components(graph.n, edges)
    if len(components) > 1:
        sizes = [len(c) for c in components]
        raise ValueError(f"graph is disconnected: {len(components)} components of sizes {sizes}")
    return edges


def _poses(x: np.ndarray) -> Poses:
    R, t = pose_from_dq(x)
    return Poses(R=R, t=t)


def _se3_inverse(T: np.ndarray) -> np.ndarray:
    """Inverses of homogeneous poses (..., 4, 4) in closed form: (R^T, -R^T t)."""
    inverse = np.zeros_like(T)
    Rt = np.swapaxes(T[..., :3, :3], -1, -2)
    inverse[..., :3, :3] = Rt
    inverse[..., :3, 3] = -np.einsum("...ij,...j->...i", Rt, T[..., :3, 3])
    inverse[..., 3, 3] = 1.0
    return inverse


def power_method(
    C_s: csr_matrix, C_d: csr_matrix, *, tol: float = 1e-10, max_iter: int = 1000, seed: int = 0
) -> tuple[np.ndarray, int, list[float]]:
    """Dominant DQ eigenvector of C by the DQ power method (§3.3).

    v_{k+1} = C v_k / ||C v_k|| with dual-number normalization, from a seeded Gaussian start,
    until ||v_{k+1} - v_k||_2R < tol. Returns (v (n, 8), iterations, per-iteration changes).
    The top real eigenvalue of C_s is 4-fold (quaternion right-multiplication gauge), which is
    harmless: the iterates converge to one vector of that eigenspace, set by the start.
    """
    n = C_s.shape[0] // 4
    v = dq_vector_normalize(np.random.default_rng(seed).standard_normal((n, 8)))
    history: list[float] = []
    for _ in range(max_iter):
        v_new = dq_vector_normalize(dq_matvec(C_s, C_d, v))
        history.append(norm_2r(v_new - v))
        v = v_new
        if history[-1] < tol:
            break
    return v, len(history), history


def dq_spectral(
    graph: PoseGraph, *, tol: float = 1e-10, max_iter: int = 1000, seed: int = 0
) -> SyncResult:
    """DQ spectral estimator: stage 1 (power method) then entrywise projection P onto UDQs."""
    _connected_edges(graph)
    start = perf_counter()
    C_s, C_d = build_measurement_matrix(graph.n, graph.edges, measurement_dqs(graph))
    v, iterations, history = power_method(C_s, C_d, tol=tol, max_iter=max_iter, seed=seed)
    x = dq_project(v)
    poses = _poses(x)
    wall_time = perf_counter() - start
    return SyncResult(poses, iterations, history, wall_time, "dq_spectral", {"dq": x})


def dqgpm(
    graph: PoseGraph,
    *,
    tol: float = 1e-10,
    max_iter: int = 200,
    power_tol: float = 1e-10,
    power_max_iter: int = 1000,
    seed: int = 0,
    shift: float = 0.0,
    x0: np.ndarray | None = None,
    truth: Poses | None = None,
) -> SyncResult:
    """DQ generalized power method (§3.4): x_{k+1} = P((C + shift I) x_k) until the change
    ||x_{k+1} - x_k||_2R < tol.

    Starts from the stage-1 spectral estimate, or from P(x0) when x0 (n, 8) is given (stage 1
    skipped; x0's per-node signs are first aligned to the measurement signs, since a start taken
    from elsewhere, e.g. the truth, need not share them). With truth, info["error_history"] holds
    the mean rotation error (deg, aligned) of x_0, x_1, ..., x_K; that logging is read-only and
    its time is left out of wall_time.
    """
    _connected_edges(graph)
    if x0 is not None and np.shape(x0) != (graph.n, 8):
        raise ValueError(f"x0 must have shape ({graph.n}, 8), got {np.shape(x0)}")
    start = perf_counter()
    logging_time = 0.0
    dqs = measurement_dqs(graph)
    C_s, C_d = build_measurement_matrix(graph.n, graph.edges, dqs)
    if x0 is None:
        v, power_iterations, power_history = power_method(
            C_s, C_d, tol=power_tol, max_iter=power_max_iter, seed=seed
        )
        x = dq_project(v)
    else:
        x = align_node_signs(dq_project(x0), graph.edges, dqs)
        power_iterations, power_history = 0, []

    error_history: list[float] = []

    def log_error(x: np.ndarray) -> None:
        nonlocal logging_time
        if truth is not None:
            tic = perf_counter()
            error_history.append(float(np.mean(pose_errors(_poses(x), truth)[0])))
            logging_time += perf_counter() - tic

    log_error(x)
    history: list[float] = []
    for _ in range(max_iter):
        x_new = dq_project(dq_matvec(C_s, C_d, x) + shift * x)
        history.append(norm_2r(x_new - x))
        x = x_new
        log_error(x)
        if history[-1] < tol:
            break
    poses = _poses(x)
    wall_time = perf_counter() - start - logging_time
    info = {
        "dq": x,
        "power_iterations": power_iterations,
        "power_history": power_history,
        "shift": shift,
    }
    if truth is not None:
        info["error_history"] = error_history
    return SyncResult(poses, len(history), history, wall_time, "dqgpm", info)


def _round_eig(vectors: np.ndarray, n: int) -> Poses:
    """Round the top-4 eigenvectors (4n x 4) of diag(deg+1)^{-1} X to SE(3) (§4 steps 1-4).

    Noiseless, the span is that of M = stacked pose matrices: U = M Q for an unknown invertible Q.
    Step 1 takes an orthonormal real basis of the eigenvectors' span (their real parts when the
    eigenvalues are real; real and imaginary parts when noise makes a conjugate pair).
    """
    real_parts = np.concatenate([vectors.real, vectors.imag], axis=1)
    U = np.linalg.svd(real_parts, full_matrices=False)[0][:, :4]
    # Step 2: map the common 4th row r to (0, 0, 0, 1) with K = [complement of r; r].
    r = U[3::4].mean(axis=0)
    complement = np.linalg.svd(r[None, :])[2][1:]
    K = np.vstack([complement, r])
    blocks = np.linalg.solve(K.T, U.T).T.reshape(n, 4, 4)  # U K^{-1}, per node
    # Step 3: remove the common affine factor A of B_i = R_i A, then project onto SO(3).
    B = blocks[:, :3, :3]
    eigval, eigvec = np.linalg.eigh(np.mean(np.swapaxes(B, 1, 2) @ B, axis=0))
    B = B @ (eigvec / np.sqrt(eigval)) @ eigvec.T  # B_i (A^T A)^{-1/2}
    if np.mean(np.linalg.det(B)) < 0:
        B = B @ np.diag([1.0, 1.0, -1.0])
    # Step 4: translations are the 4th columns over their (4, 4) entries.
    return Poses(R=project_so3(B), t=blocks[:, :3, 3] / blocks[:, 3, 3][:, None])


def eig(graph: PoseGraph, *, seed: int = 0) -> SyncResult:
    """EIG baseline (Arrigoni, Rossi & Fusiello 2016) with the principled rounding of §4.

    X has X_ii = I, X_ij = Z_ij, X_ji = Z_ij^{-1}; the 4 eigenvectors of the sparse
    diag(deg+1)^{-1} X with largest real part (ARPACK, start vector seeded for reproducibility)
    are rounded to SE(3) by _round_eig.
    """
    edges = _connected_edges(graph)
    start = perf_counter()
    n = graph.n
    Z = np.asarray(graph.Z, dtype=float)
    i, j, nodes = edges[:, 0], edges[:, 1], np.arange(n)
    rows, cols = np.concatenate([i, j, nodes]), np.concatenate([j, i, nodes])
    scale = 1.0 / (np.bincount(edges.ravel(), minlength=n) + 1.0)
    blocks = np.concatenate([Z, _se3_inverse(Z), np.broadcast_to(np.eye(4), (n, 4, 4))])
    X = block_matrix(n, rows, cols, blocks * scale[rows][:, None, None])
    v0 = np.random.default_rng(seed).standard_normal(4 * n)
    eigenvalues, vectors = eigs(X, k=4, which="LR", v0=v0)
    poses = _round_eig(vectors, n)
    wall_time = perf_counter() - start
    return SyncResult(poses, 0, [], wall_time, "eig", {"eigenvalues": eigenvalues})


def chain(graph: PoseGraph, root: int = 0) -> SyncResult:
    """Naive baseline: compose measurements along a BFS spanning tree from root.

    G_root = I; for a tree edge stored as (i, j) with Z_ij ~ G_i G_j^{-1}, G_j = Z_ij^{-1} G_i;
    for one stored the other way round, (j, i), G_j = Z_ji G_i.
    """
    edges = _connected_edges(graph)
    start = perf_counter()
    Z = np.asarray(graph.Z, dtype=float)
    G = np.zeros((graph.n, 4, 4))
    G[root] = np.eye(4)
    for child, parent, edge, forward in bfs_tree(graph.n, edges, root):
        step = np.where(forward[:, None, None], _se3_inverse(Z[edge]), Z[edge])
        G[child] = step @ G[parent]
    poses = Poses(R=G[:, :3, :3], t=G[:, :3, 3])
    wall_time = perf_counter() - start
    return SyncResult(poses, 0, [], wall_time, "chain", {"root": root})


METHODS = {"dq_spectral": dq_spectral, "dqgpm": dqgpm, "eig": eig, "chain": chain}
