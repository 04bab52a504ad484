"""Synthetic pose graphs (spec §6 (a) geometric and (b) additive; a SLAM-like chain).

Both draw n random poses (R uniform, t ~ N(0, I_3)) and a connected Erdos-Renyi graph with
edges i < j, in that order from np.random.default_rng(seed), so a seed fixes everything.
"""
from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from tasks.sync.dualquat import dq_conj, dq_from_pose, dq_mul, dq_project, matrix_from_dq
from tasks.sync.graph import PoseGraph, Poses, connected_components

MAX_GRAPH_DRAWS = 1000


def _check(n: int, p: float, **sigmas: float) -> None:
    if not (isinstance(n, (int, np.integer)) and n >= 2):
        raise ValueError(f"n must be an integer >= 2, got {n!r}")
    if not 0.0 < p <= 1.0:
        raise ValueError(f"p must be in (0, 1], got {p!r}")
    for name, value in sigmas.items():
        if not value >= 0.0:
            raise ValueError(f"{name} must be >= 0, got {value!r}")


def _random_poses(n: int, rng: np.random.Generator) -> Poses:
    R = Rotation.random(n, random_state=rng).as_matrix()
    return Poses(R=R, t=rng.standard_normal((n, 3)))


def _connected_er_edges(n: int, p: float, rng: np.random.Generator) -> np.ndarray:
    """Edges (i < j, lexicographic) of G(n, p), redrawn until connected."""
    i, j = np.triu_indices(n, k=1)
    for _ in range(MAX_GRAPH_DRAWS):
        keep = rng.random(len(i)) < p
        edges = np.column_stack([i[keep], j[keep]])
        if len(connected_components(n, edges)) == 1:
            return edges
    raise ValueError(f"G(n={n}, p={p}) was disconnected in {MAX_GRAPH_DRAWS} draws; raise p")


def geometric(
    n: int, p: float, sigma_r: float, sigma_t: float, seed: int
) -> tuple[PoseGraph, Poses]:
    """Z_ij = N_ij G_i G_j^{-1} with left-multiplied noise N_ij = (Exp(sigma_r w), sigma_t xi),
    w, xi ~ N(0, I_3): the model both DQ and matrix methods are compared on (§6 (a))."""
    _check(n, p, sigma_r=sigma_r, sigma_t=sigma_t)
    rng = np.random.default_rng(seed)
    truth = _random_poses(n, rng)
    edges = _connected_er_edges(n, p, rng)
    return PoseGraph(n=n, edges=edges, Z=_measure(truth, edges, sigma_r, sigma_t, rng)), truth


def _measure(truth: Poses, edges: np.ndarray, sigma_r: float, sigma_t: float, rng: np.random.Generator) -> np.ndarray:
    """Z_ij = N_ij G_i G_j^{-1}, N_ij = (Exp(sigma_r w), sigma_t xi), for every edge (m, 4, 4)."""
    m = len(edges)
    noise_R = Rotation.from_rotvec(sigma_r * rng.standard_normal((m, 3))).as_matrix()
    noise_t = sigma_t * rng.standard_normal((m, 3))
    R_i, R_j = truth.R[edges[:, 0]], truth.R[edges[:, 1]]
    R_rel = R_i @ np.swapaxes(R_j, 1, 2)
    t_rel = truth.t[edges[:, 0]] - np.einsum("mij,mj->mi", R_rel, truth.t[edges[:, 1]])
    Z = np.zeros((m, 4, 4))
    Z[:, :3, :3] = noise_R @ R_rel
    Z[:, :3, 3] = np.einsum("mij,mj->mi", noise_R, t_rel) + noise_t
    Z[:, 3, 3] = 1.0
    return Z


def slam_chain(
    n: int, loop_fraction: float, sigma_r: float, sigma_t: float, seed: int, *, turn: float = 0.3
) -> tuple[PoseGraph, Poses]:
    """A SLAM-like pose graph: a trajectory measured by odometry and a few loop closures.

    Poses follow a random walk (R_{i+1} = R_i Exp(turn w), t_{i+1} = t_i + xi, w, xi ~ N(0, I_3)),
    so the scene grows like sqrt(n). Edges: odometry (i, i+1) for every i, plus
    round(loop_fraction * n) loop closures (i, j), j >= i + 2, drawn uniformly without repeats.
    Measurements carry the noise of `geometric`. Mean degree about 2 (1 + loop_fraction): the
    spectral gap is small, which is what makes power iterations slow on such graphs.
    """
    _check(n, 1.0, sigma_r=sigma_r, sigma_t=sigma_t)
    if not 0.0 <= loop_fraction:
        raise ValueError(f"loop_fraction must be >= 0, got {loop_fraction!r}")
    rng = np.random.default_rng(seed)
    steps = Rotation.from_rotvec(turn * rng.standard_normal((n - 1, 3))).as_matrix()
    R = np.empty((n, 3, 3))
    R[0] = Rotation.random(random_state=rng).as_matrix()
    for k in range(n - 1):
        R[k + 1] = R[k] @ steps[k]
    t = np.cumsum(np.vstack([np.zeros((1, 3)), rng.standard_normal((n - 1, 3))]), axis=0)
    truth = Poses(R=R, t=t)
    odometry = np.column_stack([np.arange(n - 1), np.arange(1, n)])
    wanted = int(round(loop_fraction * n))
    candidates = (n - 1) * (n - 2) // 2  # pairs with j >= i + 2
    if wanted > candidates:
        raise ValueError(f"{wanted} loop closures asked for, only {candidates} non-odometry pairs exist")
    keys: set[tuple[int, int]] = set()
    while len(keys) < wanted:
        i, j = sorted(rng.integers(0, n, size=2).tolist())
        if j >= i + 2:
            keys.add((i, j))
    loops = np.array(sorted(keys), dtype=np.int64).reshape(-1, 2)
    edges = np.vstack([odometry, loops])
    return PoseGraph(n=n, edges=edges, Z=_measure(truth, edges, sigma_r, sigma_t, rng)), truth


def additive(n: int, p: float, sigma: float, seed: int) -> tuple[PoseGraph, Poses]:
    """C_ij = x_i x_j* + sigma W_ij, all 8 components of W_ij iid N(0, 1) (§6 (b)).

    The noisy C_ij go to PoseGraph.dq (not unit); matrix methods get Z_ij = matrix of P(C_ij).
    """
    _check(n, p, sigma=sigma)
    rng = np.random.default_rng(seed)
    truth = _random_poses(n, rng)
    edges = _connected_er_edges(n, p, rng)
    x = dq_from_pose(truth.R, truth.t)
    C = dq_mul(x[edges[:, 0]], dq_conj(x[edges[:, 1]]))
    C = C + sigma * rng.standard_normal(C.shape)
    return PoseGraph(n=n, edges=edges, Z=matrix_from_dq(dq_project(C)), dq=C), truth
