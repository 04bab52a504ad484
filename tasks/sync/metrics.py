"""Gauge-aligned pose errors (spec §5, evaluation definitions)."""
from __future__ import annotations

import numpy as np

from tasks.sync.graph import Poses


def project_so3(M: np.ndarray) -> np.ndarray:
    """Nearest proper rotation(s) to M (..., 3, 3) in Frobenius norm (SVD with det fix)."""
    U, _, Vt = np.linalg.svd(M)
    fix = np.ones(M.shape[:-1])
    fix[..., -1] = np.sign(np.linalg.det(U @ Vt))
    return (U * fix[..., None, :]) @ Vt


def align(est: Poses, truth: Poses) -> Poses:
    """est moved by the gauge G_i -> G_i H that best fits truth.

    R_H = SO(3) projection of sum_i (R_i^est)^T R_i^gt (minimizes sum ||R_i^est R_H - R_i^gt||_F^2);
    t_H minimizes sum ||R_i^est t_H + t_i^est - t_i^gt||^2, which for rotations R_i^est is the
    mean of (R_i^est)^T (t_i^gt - t_i^est).
    """
    R_H = project_so3(np.einsum("nji,njk->ik", est.R, truth.R))
    t_H = np.mean(np.einsum("nji,nj->ni", est.R, truth.t - est.t), axis=0)
    return Poses(R=est.R @ R_H, t=est.R @ t_H + est.t)


def rotation_angle_deg(R: np.ndarray) -> np.ndarray:
    """Rotation angle in degrees of rotations R (..., 3, 3).

    The angle arccos((tr R - 1)/2), computed as atan2(|vee(R - R^T)|/2, (tr R - 1)/2): arccos
    near 1 loses half the digits (about 1e-6 deg of noise for an exact estimate).
    """
    cos = (np.trace(R, axis1=-2, axis2=-1) - 1.0) / 2.0
    skew = np.stack(
        [R[..., 2, 1] - R[..., 1, 2], R[..., 0, 2] - R[..., 2, 0], R[..., 1, 0] - R[..., 0, 1]],
        axis=-1,
    )
    return np.degrees(np.arctan2(np.linalg.norm(skew, axis=-1) / 2.0, cos))


def pose_errors(est: Poses, truth: Poses) -> tuple[np.ndarray, np.ndarray]:
    """Per-node rotation error (deg) and translation error (scene units) after alignment."""
    aligned = align(est, truth)
    rot = rotation_angle_deg(np.swapaxes(truth.R, -1, -2) @ aligned.R)
    trans = np.linalg.norm(aligned.t - truth.t, axis=-1)
    return rot, trans


def summarize(rot: np.ndarray, trans: np.ndarray) -> dict[str, float]:
    """Mean and median over nodes of the rotation and translation errors."""
    return {
        "rot_mean": float(np.mean(rot)),
        "rot_median": float(np.median(rot)),
        "trans_mean": float(np.mean(trans)),
        "trans_median": float(np.median(trans)),
    }
