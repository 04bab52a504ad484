"""Synthetic multi-scan registration data (spec §6(c), `scans`).

A stand-in for the paper's real-data experiment, which we could not read: range scans of an
asymmetric "potato" taken from a ring of viewpoints, registered pairwise with point-to-point ICP.
The ICP outputs are the relative-pose measurements of a pose graph.

Convention (why G = T^{-1}). T_i = (R_i, t_i) maps scan-i coordinates to world coordinates
(p_world = R_i p_scan + t_i). ICP of scan j onto scan i returns the transform that maps scan-j
coordinates into scan-i coordinates, T_i^{-1} T_j. The synchronization model of §2 is
Z_ij ~ G_i G_j^{-1}, which this equals exactly when G_i = T_i^{-1}. So the graph's nodes carry
G_i = T_i^{-1} (`ScanData.truth`); a solver's estimate G_i is reported as T_i = G_i^{-1}.
Using T_i directly as G_i would make Z_ij ~ G_i^{-1} G_j, the other convention, and every
method would synchronize garbage (spec §11).

Randomness: one seed drives everything through independent `SeedSequence` children (one per
purpose), so changing n_pts does not change the poses or viewpoints of a seed. The object
itself (shape and its 20,000 surface samples) is fixed by `shape_seed` (default 0), the same
for every trial seed, as the spec asks ("fixed seed").
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import trimesh
from scipy.spatial import cKDTree
from scipy.spatial.transform import Rotation

from tasks.sync.graph import PoseGraph, Poses

SURFACE_SAMPLES = 20_000
VISIBILITY_COS = 0.1  # scan i keeps points with <normal, view_dir_i> > 0.1
AZIMUTH_JITTER_DEG = 5.0
POSE_TRANSLATION_STD = 1.5
INIT_ROTATION_DEG = 5.0
INIT_TRANSLATION_STD = 0.05
REJECT_FACTOR = 3.0  # ICP rejects pairs farther than 3x the median NN distance


@dataclass(frozen=True)
class ScanData:
    """One synthetic multi-scan registration problem.

    graph: PoseGraph over the scans; edges (i, j), i < j, for view directions within
        max_angle_deg; Z[k] = ICP(scan j onto scan i) ~ T_i^{-1} T_j = G_i G_j^{-1}.
    truth: ground-truth node poses G_i = T_i^{-1} (what synchronization estimates).
    scan_to_world: ground-truth T_i (scan -> world), the poses one reports.
    points: n_scans arrays (k, 3) of noisy scan points in scan-i coordinates.
    icp_rmse: (m,) residual RMSE of the inlier correspondences per edge at ICP convergence.
    icp_time: total seconds spent in pairwise ICP (perf_counter).
    icp_iterations: (m,) ICP iterations per edge.
    view_dirs: (n_scans, 3) unit viewing directions in world coordinates.
    """

    graph: PoseGraph
    truth: Poses
    scan_to_world: Poses
    points: list[np.ndarray]
    icp_rmse: np.ndarray
    icp_time: float
    icp_iterations: np.ndarray
    view_dirs: np.ndarray


def potato_mesh(shape_seed: int = 0) -> trimesh.Trimesh:
    """The asymmetric "potato": an icosphere (subdivisions=4) with radially perturbed vertices.

    Each unit vertex v is scaled by 1 + 0.3 * sum_k a_k cos(w_k . v + phi_k) / sum_k a_k,
    k = 1..6, a_k ~ U[0.3, 1], w_k ~ N(0, 2^2 I_3), phi_k ~ U[0, 2 pi]; radius in [0.7, 1.3].
    A symmetric shape would make ICP ambiguous, hence the bumps.
    """
    rng = np.random.default_rng(shape_seed)
    amplitude = rng.uniform(0.3, 1.0, size=6)
    frequency = rng.normal(0.0, 2.0, size=(6, 3))
    phase = rng.uniform(0.0, 2.0 * np.pi, size=6)
    sphere = trimesh.creation.icosphere(subdivisions=4)
    v = np.asarray(sphere.vertices, dtype=float)
    v = v / np.linalg.norm(v, axis=1, keepdims=True)
    bumps = np.cos(v @ frequency.T + phase) @ amplitude / amplitude.sum()  # (V,)
    return trimesh.Trimesh(vertices=v * (1.0 + 0.3 * bumps)[:, None],
                           faces=np.asarray(sphere.faces), process=False)


def potato_surface(shape_seed: int = 0, count: int = SURFACE_SAMPLES) -> tuple[np.ndarray, np.ndarray]:
    """`count` points sampled uniformly on the potato surface (world coordinates) and their
    face normals, both (count, 3). Deterministic for a shape_seed."""
    mesh = potato_mesh(shape_seed)
    points, face_index = trimesh.sample.sample_surface(mesh, count, seed=shape_seed)
    normals = np.asarray(mesh.face_normals)[face_index]
    return np.asarray(points, dtype=float), np.asarray(normals, dtype=float)


def kabsch(source: np.ndarray, target: np.ndarray) -> np.ndarray:
    """The rigid T (4, 4) minimizing sum ||R source_k + t - target_k||^2, det(R) = +1.

    Closed form (Kabsch/Umeyama without scale): SVD of the cross-covariance, with the sign of
    the last singular direction flipped when needed so that R is a rotation, not a reflection.
    """
    mu_s, mu_t = source.mean(axis=0), target.mean(axis=0)
    H = (source - mu_s).T @ (target - mu_t)  # (3, 3)
    U, _, Vt = np.linalg.svd(H)
    D = np.diag([1.0, 1.0, np.sign(np.linalg.det(Vt.T @ U.T)) or 1.0])
    R = Vt.T @ D @ U.T
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = mu_t - R @ mu_s
    return T


def icp(source: np.ndarray, target: np.ndarray, init: np.ndarray, *, max_iter: int = 50,
        tol: float = 1e-8) -> tuple[np.ndarray, float, int]:
    """Point-to-point ICP: the rigid T (4, 4) with T * source ~ target.

    Each iteration: nearest target neighbour of every transformed source point (cKDTree),
    reject pairs farther than 3x the median distance, closed-form Kabsch update dT composed on
    the left (T <- dT T). Stops after max_iter iterations or when the update is below tol
    (||dR - I||_F + ||dt|| < tol).

    Returns (T, rmse, iterations): rmse is the RMS distance of the inlier pairs at the returned T.
    """
    source = np.asarray(source, dtype=float)
    target = np.asarray(target, dtype=float)
    if source.ndim != 2 or source.shape[1] != 3 or target.ndim != 2 or target.shape[1] != 3:
        raise ValueError(f"icp: source and target must be (k, 3); got {source.shape}, {target.shape}")
    if len(source) < 3 or len(target) < 3:
        raise ValueError(f"icp: need >= 3 points each; got {len(source)}, {len(target)}")
    T = np.array(init, dtype=float)
    if T.shape != (4, 4):
        raise ValueError(f"icp: init must be (4, 4); got {T.shape}")
    tree = cKDTree(target)

    def inliers(T):
        moved = source @ T[:3, :3].T + T[:3, 3]
        dist, nn = tree.query(moved)
        keep = dist <= REJECT_FACTOR * np.median(dist)
        return moved[keep], target[nn[keep]], dist[keep]

    iterations = 0
    for iterations in range(1, max_iter + 1):
        moved, matched, _ = inliers(T)
        dT = kabsch(moved, matched)
        T = dT @ T
        if np.linalg.norm(dT[:3, :3] - np.eye(3)) + np.linalg.norm(dT[:3, 3]) < tol:
            break
    _, _, dist = inliers(T)
    return T, float(np.sqrt(np.mean(dist**2))), iterations


def _pose_matrix(R: np.ndarray, t: np.ndarray) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = t
    return T


def _ring_view_dirs(n_scans: int, elevation_deg: float, rng: np.random.Generator) -> np.ndarray:
    """Unit directions at a fixed elevation, evenly spaced azimuths + U[-5, 5] degree jitter."""
    azimuth = 2.0 * np.pi * np.arange(n_scans) / n_scans
    azimuth = azimuth + np.deg2rad(rng.uniform(-AZIMUTH_JITTER_DEG, AZIMUTH_JITTER_DEG, n_scans))
    el = np.deg2rad(elevation_deg)
    return np.stack([np.cos(el) * np.cos(azimuth), np.cos(el) * np.sin(azimuth),
                     np.full(n_scans, np.sin(el))], axis=1)


def _perturbed_init(T_true: np.ndarray, center: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """True relative pose perturbed by a 5 degree random-axis rotation and N(0, 0.05^2 I) shift.

    The rotation is applied about `center` (the target scan's centroid), not about the scan
    frame's origin: the frames sit ~1.5 units from the object at random, and a rotation about
    a far-away origin would add an arbitrary, frame-dependent translation error (our choice).
    """
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    R = Rotation.from_rotvec(np.deg2rad(INIT_ROTATION_DEG) * axis).as_matrix()
    shift = rng.normal(0.0, INIT_TRANSLATION_STD, size=3)
    P = _pose_matrix(R, center - R @ center + shift)
    return P @ T_true


def make_scans(n_scans: int, n_pts: int, seed: int, *, noise: float = 0.005,
               max_angle_deg: float = 75.0, elevation_deg: float = 20.0,
               shape_seed: int = 0) -> ScanData:
    """Simulate n_scans range scans of the potato and register overlapping pairs with ICP.

    Scan i sees the surface samples with <normal, view_dir_i> > 0.1, keeps n_pts of them at
    random, adds N(0, noise^2) per coordinate, and stores them in its own coordinates
    p_scan = R_i^T (p_world - t_i), with T_i = (R_i, t_i) a uniform random rotation and
    t_i ~ N(0, 1.5^2 I_3). Pairs i < j whose view directions differ by <= max_angle_deg are
    edges, measured by ICP of scan j onto scan i (= T_i^{-1} T_j = G_i G_j^{-1}, G_i = T_i^{-1};
    see the module docstring). Deterministic for (seed, shape_seed).
    """
    if n_scans < 2:
        raise ValueError(f"make_scans: n_scans must be >= 2; got {n_scans}")
    if n_pts < 3:
        raise ValueError(f"make_scans: n_pts must be >= 3; got {n_pts}")
    if noise < 0:
        raise ValueError(f"make_scans: noise must be >= 0; got {noise}")
    if not 0 < max_angle_deg <= 180:
        raise ValueError(f"make_scans: max_angle_deg must be in (0, 180]; got {max_angle_deg}")

    view_rng, pose_rng, scan_rng, init_rng = (
        np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(4))
    surface, normals = potato_surface(shape_seed)

    view_dirs = _ring_view_dirs(n_scans, elevation_deg, view_rng)
    R = Rotation.random(n_scans, random_state=pose_rng).as_matrix()  # (n, 3, 3)
    t = pose_rng.normal(0.0, POSE_TRANSLATION_STD, size=(n_scans, 3))

    points = []
    for i in range(n_scans):
        visible = np.flatnonzero(normals @ view_dirs[i] > VISIBILITY_COS)
        if len(visible) < n_pts:
            raise ValueError(f"make_scans: scan {i} sees {len(visible)} surface points, "
                             f"fewer than n_pts={n_pts}")
        chosen = scan_rng.choice(visible, size=n_pts, replace=False)
        world = surface[chosen] + scan_rng.normal(0.0, noise, size=(n_pts, 3))
        points.append((world - t[i]) @ R[i])  # rows of R_i^T (p - t_i)

    cos_angle = np.clip(view_dirs @ view_dirs.T, -1.0, 1.0)
    close = np.rad2deg(np.arccos(cos_angle)) <= max_angle_deg
    edges = np.array([(i, j) for i in range(n_scans) for j in range(i + 1, n_scans) if close[i, j]],
                     dtype=np.int64).reshape(-1, 2)

    T_world = np.stack([_pose_matrix(R[i], t[i]) for i in range(n_scans)])
    T_inv = np.linalg.inv(T_world)
    Z = np.empty((len(edges), 4, 4))
    rmse = np.empty(len(edges))
    iters = np.empty(len(edges), dtype=np.int64)
    icp_time = 0.0
    for k, (i, j) in enumerate(edges):
        init = _perturbed_init(T_inv[i] @ T_world[j], points[i].mean(axis=0), init_rng)
        start = time.perf_counter()
        Z[k], rmse[k], iters[k] = icp(points[j], points[i], init)
        icp_time += time.perf_counter() - start

    R_G = np.transpose(R, (0, 2, 1))
    truth = Poses(R=R_G, t=-np.einsum("nab,nb->na", R_G, t))
    return ScanData(graph=PoseGraph(n=n_scans, edges=edges, Z=Z), truth=truth,
                    scan_to_world=Poses(R=R, t=t), points=points, icp_rmse=rmse,
                    icp_time=icp_time, icp_iterations=iters, view_dirs=view_dirs)
