"""Dual quaternions (DQ) on real arrays (spec §3.1).

A DQ a = a_s + eps a_d (eps^2 = 0) is a real array of shape (..., 8): standard part a_s in
[..., :4], dual part a_d in [..., 4:]. A pose (R, t) is the unit DQ (UDQ) s + eps (1/2)(0, t) s
with s the unit quaternion of R; the UDQ product is pose composition G_1 G_2.
"""
from __future__ import annotations

import numpy as np

from tasks.sync.quaternion import qconj, qmul, quat_from_rotmat, rotmat_from_quat


def dq_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """DQ product a b = a_s b_s + eps (a_s b_d + a_d b_s)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    standard = qmul(a[..., :4], b[..., :4])
    dual = qmul(a[..., :4], b[..., 4:]) + qmul(a[..., 4:], b[..., :4])
    return np.concatenate([standard, dual], axis=-1)


def dq_conj(a: np.ndarray) -> np.ndarray:
    """a* = a_s* + eps a_d*: the quaternion conjugate on both parts (not the dual conjugate).

    For a UDQ this is the inverse, and C_ji = C_ij* makes the measurement matrix Hermitian.
    """
    return np.asarray(a, dtype=float) * np.array([1.0, -1.0, -1.0, -1.0] * 2)


def dq_project(a: np.ndarray) -> np.ndarray:
    """Entrywise normalization P(a) = a / |a| onto the unit DQs.

    Uses the dual-number magnitude |a| = |a_s| + eps <a_s, a_d>/|a_s|: the standard part is
    normalized and the dual part keeps only its component orthogonal to a_s, divided by |a_s|.
    P is invariant to positive scaling and fixes UDQs.
    """
    a = np.asarray(a, dtype=float)
    s, d = a[..., :4], a[..., 4:]
    norm = np.linalg.norm(s, axis=-1, keepdims=True)
    inner = np.sum(s * d, axis=-1, keepdims=True)
    return np.concatenate([s / norm, d / norm - s * inner / norm**3], axis=-1)


def dq_vector_normalize(x: np.ndarray) -> np.ndarray:
    """x / ||x|| for a stacked DQ vector x (n, 8), by dual-number division.

    ||x|| = ||x_s|| + eps <x_s, x_d>/||x_s|| over all 4n standard / dual components; the result
    has ||x_s|| = 1 and <x_s, x_d> = 0. Dividing the 8n-vector by its Euclidean norm is wrong.
    """
    x = np.asarray(x, dtype=float)
    s, d = x[:, :4], x[:, 4:]
    norm = np.linalg.norm(s)
    inner = np.sum(s * d)
    return np.concatenate([s / norm, d / norm - s * inner / norm**3], axis=1)


def norm_2r(x: np.ndarray) -> float:
    """The 2^R norm sqrt(||x_s||^2 + ||x_d||^2), a real number for iterate changes and errors."""
    return float(np.linalg.norm(x))


def dq_from_pose(R: np.ndarray, t: np.ndarray) -> np.ndarray:
    """UDQ (..., 8) of poses (R (..., 3, 3), t (..., 3)): s = quat(R), d = (1/2)(0, t) s."""
    s = quat_from_rotmat(R)
    t = np.asarray(t, dtype=float)
    pure = np.concatenate([np.zeros(t.shape[:-1] + (1,)), t], axis=-1)
    return np.concatenate([s, 0.5 * qmul(pure, s)], axis=-1)


def pose_from_dq(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Poses (R (..., 3, 3), t (..., 3)) of UDQs: R from s, t = vector part of 2 d s*."""
    x = np.asarray(x, dtype=float)
    R = rotmat_from_quat(x[..., :4])
    t = 2.0 * qmul(x[..., 4:], qconj(x[..., :4]))[..., 1:]
    return R, t


def dq_from_matrix(T: np.ndarray) -> np.ndarray:
    """UDQ (..., 8) of homogeneous pose matrices T (..., 4, 4)."""
    T = np.asarray(T, dtype=float)
    return dq_from_pose(T[..., :3, :3], T[..., :3, 3])


def matrix_from_dq(x: np.ndarray) -> np.ndarray:
    """Homogeneous pose matrices (..., 4, 4) of UDQs (..., 8)."""
    R, t = pose_from_dq(x)
    T = np.zeros(R.shape[:-2] + (4, 4))
    T[..., :3, :3] = R
    T[..., :3, 3] = t
    T[..., 3, 3] = 1.0
    return T
