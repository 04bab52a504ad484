"""Quaternion algebra on real arrays (spec §3.1).

A quaternion q = w + x i + y j + z k is a real array of shape (..., 4), scalar first. Every
function broadcasts over leading dimensions, so a whole pose graph is handled in one call.
"""
from __future__ import annotations

import numpy as np


def qmul(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Hamilton product p q (order matters)."""
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    pw, px, py, pz = np.moveaxis(p, -1, 0)
    qw, qx, qy, qz = np.moveaxis(q, -1, 0)
    return np.stack(
        [
            pw * qw - px * qx - py * qy - pz * qz,
            pw * qx + px * qw + py * qz - pz * qy,
            pw * qy - px * qz + py * qw + pz * qx,
            pw * qz + px * qy - py * qx + pz * qw,
        ],
        axis=-1,
    )


def qconj(q: np.ndarray) -> np.ndarray:
    """Conjugate q* = (w, -x, -y, -z); the inverse of a unit quaternion."""
    return np.asarray(q, dtype=float) * np.array([1.0, -1.0, -1.0, -1.0])


def qleft(q: np.ndarray) -> np.ndarray:
    """Left-multiplication matrix L(q), shape (..., 4, 4), with L(q) p = q p.

    This is the real representation of a quaternion matrix block: L(q*) = L(q)^T and
    L(p q) = L(p) L(q), so a Hermitian quaternion matrix becomes a symmetric real one.
    """
    w, x, y, z = np.moveaxis(np.asarray(q, dtype=float), -1, 0)
    rows = [
        [w, -x, -y, -z],
        [x, w, -z, y],
        [y, z, w, -x],
        [z, -y, x, w],
    ]
    return np.stack([np.stack(row, axis=-1) for row in rows], axis=-2)


def quat_from_rotmat(R: np.ndarray) -> np.ndarray:
    """Unit quaternion of a rotation matrix (..., 3, 3), sign chosen with w >= 0.

    Shepperd's method: the rows of the symmetric matrix 4 q q^T are linear in R; the row with
    the largest diagonal entry is the best-conditioned multiple of q, so it is normalized.
    """
    R = np.asarray(R, dtype=float)
    m00, m01, m02 = R[..., 0, 0], R[..., 0, 1], R[..., 0, 2]
    m10, m11, m12 = R[..., 1, 0], R[..., 1, 1], R[..., 1, 2]
    m20, m21, m22 = R[..., 2, 0], R[..., 2, 1], R[..., 2, 2]
    outer = np.stack(
        [
            np.stack([1 + m00 + m11 + m22, m21 - m12, m02 - m20, m10 - m01], axis=-1),
            np.stack([m21 - m12, 1 + m00 - m11 - m22, m01 + m10, m02 + m20], axis=-1),
            np.stack([m02 - m20, m01 + m10, 1 - m00 + m11 - m22, m12 + m21], axis=-1),
            np.stack([m10 - m01, m02 + m20, m12 + m21, 1 - m00 - m11 + m22], axis=-1),
        ],
        axis=-2,
    )  # (..., 4, 4) = 4 q q^T
    best = np.argmax(np.diagonal(outer, axis1=-2, axis2=-1), axis=-1)
    q = np.take_along_axis(outer, best[..., None, None], axis=-2)[..., 0, :]
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    return np.where(q[..., :1] < 0, -q, q)


def rotmat_from_quat(q: np.ndarray) -> np.ndarray:
    """Rotation matrix (..., 3, 3) of a quaternion; q and -q give the same matrix.

    q is normalized first, so the output is a proper rotation even for a slightly non-unit q.
    """
    q = np.asarray(q, dtype=float)
    w, x, y, z = np.moveaxis(q / np.linalg.norm(q, axis=-1, keepdims=True), -1, 0)
    rows = [
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ]
    return np.stack([np.stack(row, axis=-1) for row in rows], axis=-2)
