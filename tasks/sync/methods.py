"""SE(3) synchronization methods: the DQ pipeline (spec §3.3-3.4) and baselines (§4).

Every method is `method(graph, **options) -> SyncResult`; wall_time covers matrix build, solver
and rounding / pose extraction (perf_counter), not input validation.
"""
from __future__ import annotations

from time import perf_counter

import numpy as np
from scipy.sparse.linalg import eigs

from tasks.sync import native
from tasks.sync.dq_operator import DQOperator, Trace, build_operator, gpm_numpy, power_numpy
from tasks.sync.dualquat import dq_conj, dq_mul, dq_project, pose_from_dq
from tasks.sync.graph import PoseGraph, Poses, SyncResult, connected_components
from tasks.sync.measurement import align_node_signs, bfs_tree, block_matrix, check_edges, measurement_dqs
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


# Stopping tolerances (per node, see tasks/sync/dq_operator.py and the README for why these values).
ROT_TOL = 1e-6  # max_i ||s_i^{k+1} - s_i^k||: about 1e-4 degrees
TRANS_TOL = 1e-6  # max_i translation change / scene scale
POWER_TOL = 1e-3  # the power method as DQGPM's initializer only: about 0.1 degrees


ENGINES = (*native.COMPILED, "numpy")


def _numpy_measurements(n: int, edges: np.ndarray, Z: np.ndarray, dq: np.ndarray | None) -> np.ndarray:
    return measurement_dqs(PoseGraph(n, edges, Z, dq), checked=True)


NUMPY = native.Engine("numpy", power_numpy, gpm_numpy, _numpy_measurements)


def _engine(engine: str) -> native.Engine:
    """The iterations of an engine: "numba" (compiled: ahead of time where built, else numba's JIT; see
    tasks/sync/native.py), "jit" (numba's JIT only) or "numpy" (the reference). Only the chosen one is loaded."""
    if engine in native.COMPILED:
        return native.engine(engine)
    if engine == "numpy":
        return NUMPY
    raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")


def _measurements(graph: PoseGraph, edges: np.ndarray, iterations: native.Engine) -> np.ndarray:
    """Sign-fixed measured DQs of a validated graph, by the engine's code path."""
    return iterations.measurements(graph.n, edges, graph.Z, graph.dq)


def power_method(
    op: DQOperator, *, rot_tol: float = ROT_TOL, trans_tol: float = TRANS_TOL, max_iter: int = 1000,
    seed: int = 0, engine: str = "numba",
) -> Trace:
    """Dominant DQ eigenvector of C by the DQ power method (§3.3).

    v_{k+1} = C v_k / ||C v_k|| with dual-number normalization, from a seeded Gaussian start,
    until the projected iterate P(v_k) moves by at most rot_tol (rotation part) and
    trans_tol x scene scale (translation part) at every node. Returns the Trace (v, P(v),
    per-iteration changes, converged). The top real eigenvalue of C_s is 4-fold (quaternion
    right-multiplication gauge), which is harmless: the iterates converge to one vector of that
    eigenspace, set by the start.
    """
    v0 = np.random.default_rng(seed).standard_normal((op.n, 8))
    return _engine(engine).power(op, v0, rot_tol, trans_tol, max_iter)


def _stop_message(name: str, trace: Trace, max_iter: int) -> str:
    if trace.converged:
        return f"{name} converged in {trace.iterations} iterations"
    return (f"{name} stopped at max_iter={max_iter} without converging (last per-node change: "
            f"rotation {trace.rotation[-1]:.3g}, translation {trace.translation[-1]:.3g})")


def dq_spectral(
    graph: PoseGraph, *, rot_tol: float = ROT_TOL, trans_tol: float = TRANS_TOL, max_iter: int = 1000,
    seed: int = 0, engine: str = "numba",
) -> SyncResult:
    """DQ spectral estimator: stage 1 (power method) then entrywise projection P onto UDQs.

    As an estimator of its own it stops at DQGPM's tolerances (not the looser POWER_TOL it is
    given as DQGPM's initializer)."""
    edges = _connected_edges(graph)
    graph = PoseGraph(graph.n, edges, graph.Z, graph.dq)
    iterations = _engine(engine)
    start = perf_counter()
    op = build_operator(graph.n, edges, _measurements(graph, edges, iterations), checked=True)
    trace = power_method(op, rot_tol=rot_tol, trans_tol=trans_tol, max_iter=max_iter, seed=seed, engine=engine)
    x = trace.projected
    poses = _poses(x)
    wall_time = perf_counter() - start
    info = {"dq": x, "translation_history": trace.translation, "final_change": _final(trace), "engine": engine,
            "kernels": iterations.build}
    return SyncResult(poses, trace.iterations, trace.rotation, wall_time, "dq_spectral", info,
                      trace.converged, _stop_message("power method", trace, max_iter))


def _final(trace: Trace) -> dict:
    return {"rotation": trace.rotation[-1] if trace.rotation else 0.0,
            "translation": trace.translation[-1] if trace.translation else 0.0}


def tree_start(n: int, edges: np.ndarray, dqs: np.ndarray) -> np.ndarray:
    """Spanning-tree warm start: x_0 = 1 and, along a BFS tree from node 0, x_j = z_ij* x_i for a
    tree edge stored as (i, j) (z_ij ~ x_i x_j*), x_j = z_ji x_i for one stored as (j, i)."""
    x = np.zeros((n, 8))
    x[0, 0] = 1.0
    for child, parent, edge, forward in bfs_tree(n, edges, 0, checked=True):
        z = dqs[edge]
        step = np.where(forward[:, None], dq_conj(z), z)
        x[child] = dq_project(dq_mul(step, x[parent]))
    return x


def dqgpm(
    graph: PoseGraph,
    *,
    rot_tol: float = ROT_TOL,
    trans_tol: float = TRANS_TOL,
    max_iter: int = 200,
    power_tol: float = POWER_TOL,
    power_max_iter: int = 1000,
    seed: int = 0,
    shift: float = 0.0,
    init: str = "spectral",
    engine: str = "numba",
    x0: np.ndarray | None = None,
    truth: Poses | None = None,
) -> SyncResult:
    """DQ generalized power method (§3.4): x_{k+1} = P((C + shift I) x_k) until every node's
    rotation part moves by at most rot_tol and its translation part by at most trans_tol x the
    scene scale (dq_operator's stopping rule); converged=False when max_iter came first.

    Start (init): "spectral" = the stage-1 power method stopped at power_tol per node (an
    initializer only: DQGPM contracts from it), "tree" = composition along a BFS spanning tree
    (a warm start for chain-like graphs, where the power method needs thousands of iterations).
    x0 (n, 8), when given, replaces both (x0's per-node signs are first aligned to the
    measurement signs, since a start taken from elsewhere, e.g. the truth, need not share them).
    With truth, info["error_history"] holds the mean rotation error (deg, aligned) of x_0, ...,
    x_K; the iterations then run one at a time (same arithmetic) and the logging time is left
    out of wall_time.
    """
    edges = _connected_edges(graph)
    graph = PoseGraph(graph.n, edges, graph.Z, graph.dq)  # validated once, outside the timed region
    if x0 is not None and np.shape(x0) != (graph.n, 8):
        raise ValueError(f"x0 must have shape ({graph.n}, 8), got {np.shape(x0)}")
    if init not in ("spectral", "tree"):
        raise ValueError(f"init must be 'spectral' or 'tree', got {init!r}")
    iterations = _engine(engine)
    gpm = iterations.gpm
    start = perf_counter()
    logging_time = 0.0
    dqs = _measurements(graph, edges, iterations)
    op = build_operator(graph.n, edges, dqs, checked=True)
    power = None
    if x0 is not None:
        x = align_node_signs(dq_project(x0), graph.edges, dqs)
    elif init == "tree":
        x = tree_start(graph.n, edges, dqs)
    else:
        power = power_method(op, rot_tol=power_tol, trans_tol=power_tol, max_iter=power_max_iter,
                             seed=seed, engine=engine)
        x = power.projected

    error_history: list[float] = []

    def log_error(x: np.ndarray) -> None:
        nonlocal logging_time
        tic = perf_counter()
        error_history.append(float(np.mean(pose_errors(_poses(x), truth)[0])))
        logging_time += perf_counter() - tic

    if truth is None:
        trace = gpm(op, x, shift, rot_tol, trans_tol, max_iter)
    else:
        log_error(x)
        trace = Trace(x, [], [], False)
        while trace.iterations < max_iter and not trace.converged:
            step = gpm(op, trace.x, shift, rot_tol, trans_tol, 1)
            trace = Trace(step.x, trace.rotation + step.rotation, trace.translation + step.translation,
                          step.converged)
            log_error(trace.x)
    x = trace.x
    poses = _poses(x)
    wall_time = perf_counter() - start - logging_time
    message = _stop_message("DQGPM", trace, max_iter)
    if power is not None and not power.converged:
        message += "; " + _stop_message("its power-method start", power, power_max_iter)
    info = {
        "dq": x,
        "init": "x0" if x0 is not None else init,
        "engine": engine,
        "kernels": iterations.build,
        "power_iterations": power.iterations if power else 0,
        "power_history": power.rotation if power else [],
        "power_converged": power.converged if power else None,
        "translation_history": trace.translation,
        "final_change": _final(trace),
        "tolerances": {"rotation": rot_tol, "translation": trans_tol, "translation_scale": op.scale,
                       "power": power_tol},
        "shift": shift,
    }
    if truth is not None:
        info["error_history"] = error_history
    return SyncResult(poses, trace.iterations, trace.rotation, wall_time, "dqgpm", info, trace.converged, message)


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


def eig(graph: PoseGraph, *, seed: int = 0, tol: float = 0.0) -> SyncResult:
    """EIG baseline (Arrigoni, Rossi & Fusiello 2016) with the principled rounding of §4.

    X has X_ii = I, X_ij = Z_ij, X_ji = Z_ij^{-1}; the 4 eigenvectors of the sparse
    diag(deg+1)^{-1} X with largest real part (ARPACK, start vector seeded for reproducibility)
    are rounded to SE(3) by _round_eig. tol: ARPACK's relative accuracy of the Ritz values
    (0 = machine precision, scipy's stock setting); a looser tol is the "matched" EIG of the
    timing runs (its relative residual is then of the order of DQGPM's per-node tolerance).
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
    eigenvalues, vectors = eigs(X, k=4, which="LR", v0=v0, tol=tol)
    poses = _round_eig(vectors, n)
    wall_time = perf_counter() - start
    return SyncResult(poses, 0, [], wall_time, "eig", {"eigenvalues": eigenvalues, "tol": tol},
                      True, "ARPACK converged")


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
    return SyncResult(poses, 0, [], wall_time, "chain", {"root": root}, True, "closed form")


METHODS = {"dq_spectral": dq_spectral, "dqgpm": dqgpm, "eig": eig, "chain": chain}
