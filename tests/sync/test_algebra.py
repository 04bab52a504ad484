"""Spec §10 tests 1-5: quaternion / DQ algebra and the real block representation."""
from __future__ import annotations

import numpy as np
import pytest
from pytransform3d.transformations import dual_quaternion_from_transform
from scipy.spatial.transform import Rotation

from tasks.sync.dualquat import (
    dq_conj,
    dq_from_matrix,
    dq_from_pose,
    dq_mul,
    dq_project,
    dq_vector_normalize,
    matrix_from_dq,
    pose_from_dq,
)
from tasks.sync.measurement import (
    build_measurement_matrix,
    check_edges,
    dq_matvec,
)
from tasks.sync.quaternion import qconj, qleft, qmul, quat_from_rotmat, rotmat_from_quat

TOL = 1e-12


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)


def random_poses(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    return Rotation.random(n, random_state=rng).as_matrix(), rng.standard_normal((n, 3))


def homogeneous(R: np.ndarray, t: np.ndarray) -> np.ndarray:
    T = np.zeros(R.shape[:-2] + (4, 4))
    T[..., :3, :3], T[..., :3, 3], T[..., 3, 3] = R, t, 1.0
    return T


def equal_up_to_sign(a: np.ndarray, b: np.ndarray, tol: float) -> bool:
    return bool(np.all(np.minimum(np.abs(a - b).max(-1), np.abs(a + b).max(-1)) < tol))


# --- test 1: quaternion algebra ----------------------------------------------------------------


def test_quaternion_algebra(rng):
    p, q, r = rng.standard_normal((3, 50, 4))
    assert np.allclose(qmul(qmul(p, q), r), qmul(p, qmul(q, r)), atol=TOL, rtol=0)
    assert np.allclose(qconj(qmul(p, q)), qmul(qconj(q), qconj(p)), atol=TOL, rtol=0)
    norm = lambda a: np.linalg.norm(a, axis=-1)  # noqa: E731
    assert np.allclose(norm(qmul(p, q)), norm(p) * norm(q), atol=TOL, rtol=0)
    assert np.allclose(qleft(qconj(q)), np.swapaxes(qleft(q), -1, -2), atol=TOL, rtol=0)
    assert np.allclose(qleft(qmul(p, q)), qleft(p) @ qleft(q), atol=TOL, rtol=0)
    assert np.allclose(np.einsum("nij,nj->ni", qleft(q), p), qmul(q, p), atol=TOL, rtol=0)


def test_hamilton_units():
    one, i, j, k = np.eye(4)
    assert np.array_equal(qmul(i, j), k)
    assert np.array_equal(qmul(j, i), -k)
    assert np.array_equal(qmul(i, i), -one)


def test_quaternion_rotation_matrix_round_trip(rng):
    R = Rotation.random(200, random_state=rng).as_matrix()
    # Near-pi rotations exercise the non-w branches of Shepperd's method.
    axes = rng.standard_normal((20, 3))
    R_pi = Rotation.from_rotvec(
        axes / np.linalg.norm(axes, axis=1, keepdims=True) * (np.pi - 1e-9)
    ).as_matrix()
    R = np.concatenate([R, R_pi, np.eye(3)[None]])
    q = quat_from_rotmat(R)
    assert np.allclose(np.linalg.norm(q, axis=-1), 1.0, atol=TOL, rtol=0)
    assert np.all(q[:, 0] >= 0)
    assert np.allclose(rotmat_from_quat(q), R, atol=TOL, rtol=0)
    scipy_q = Rotation.from_matrix(R).as_quat()[:, [3, 0, 1, 2]]  # scipy is scalar-last
    assert equal_up_to_sign(q, scipy_q, 1e-12)


# --- test 2: pose <-> UDQ ---------------------------------------------------------------------


def test_pose_dq_round_trip(rng):
    R, t = random_poses(rng, 100)
    R_back, t_back = pose_from_dq(dq_from_pose(R, t))
    assert np.allclose(R_back, R, atol=TOL, rtol=0)
    assert np.allclose(t_back, t, atol=TOL, rtol=0)
    assert np.allclose(matrix_from_dq(dq_from_matrix(homogeneous(R, t))), homogeneous(R, t),
                       atol=TOL, rtol=0)


def test_dq_product_is_pose_composition(rng):
    T1 = homogeneous(*random_poses(rng, 50))
    T2 = homogeneous(*random_poses(rng, 50))
    product = dq_mul(dq_from_matrix(T1), dq_from_matrix(T2))
    assert np.allclose(matrix_from_dq(product), T1 @ T2, atol=TOL, rtol=0)


def test_inverse_pose_is_conjugate(rng):
    T = homogeneous(*random_poses(rng, 50))
    x = dq_from_matrix(T)
    assert equal_up_to_sign(dq_from_matrix(np.linalg.inv(T)), dq_conj(x), TOL)
    identity = np.array([1.0, 0, 0, 0, 0, 0, 0, 0])
    assert np.allclose(dq_mul(x, dq_conj(x)), identity, atol=TOL, rtol=0)
    assert np.allclose(dq_mul(dq_conj(x), x), identity, atol=TOL, rtol=0)


def test_matches_pytransform3d(rng):
    T = homogeneous(*random_poses(rng, 20))
    ours = dq_from_matrix(T)
    # pytransform3d: (pw, px, py, pz, qw, qx, qy, qz), real part then dual part, scalar first.
    theirs = np.array([dual_quaternion_from_transform(T_k) for T_k in T])
    assert equal_up_to_sign(ours, theirs, 1e-12)


# --- test 3: entrywise projection P ---------------------------------------------------------------


def test_projection_is_unit_and_idempotent(rng):
    a = rng.standard_normal((100, 8))
    x = dq_project(a)
    assert np.allclose(np.linalg.norm(x[:, :4], axis=1), 1.0, atol=TOL, rtol=0)
    assert np.allclose(np.sum(x[:, :4] * x[:, 4:], axis=1), 0.0, atol=TOL, rtol=0)
    udq = dq_from_pose(*random_poses(rng, 100))
    assert np.allclose(dq_project(udq), udq, atol=TOL, rtol=0)
    scale = rng.uniform(0.01, 100.0, size=(100, 1))
    assert np.allclose(dq_project(scale * a), x, atol=TOL, rtol=0)


def test_projection_is_dual_number_division(rng):
    """P(a) |a| = a with |a| = |a_s| + eps <a_s, a_d>/|a_s| (dual-number magnitude)."""
    a = rng.standard_normal((20, 8))
    x = dq_project(a)
    magnitude = np.linalg.norm(a[:, :4], axis=1, keepdims=True)
    dual = np.sum(a[:, :4] * a[:, 4:], axis=1, keepdims=True) / magnitude
    back = np.concatenate([x[:, :4] * magnitude, x[:, 4:] * magnitude + x[:, :4] * dual], axis=1)
    assert np.allclose(back, a, atol=TOL, rtol=0)


# --- test 4: dual-number vector normalization -------------------------------------------------------


def test_vector_normalization(rng):
    x = dq_vector_normalize(3.0 * rng.standard_normal((40, 8)) + 1.0)
    assert abs(np.linalg.norm(x[:, :4]) - 1.0) < TOL
    assert abs(np.sum(x[:, :4] * x[:, 4:])) < TOL
    assert np.allclose(dq_vector_normalize(x), x, atol=TOL, rtol=0)


# --- test 5: real block representation --------------------------------------------------------------


def random_edges(rng: np.random.Generator, n: int, p: float) -> np.ndarray:
    i, j = np.triu_indices(n, k=1)
    keep = rng.random(len(i)) < p
    edges = np.column_stack([i[keep], j[keep]])
    swap = rng.random(len(edges)) < 0.5  # both storage orientations
    edges[swap] = edges[swap, ::-1]
    return edges


def test_block_matvec_matches_direct_dq_product(rng):
    n = 15
    edges = random_edges(rng, n, 0.4)
    dqs = rng.standard_normal((len(edges), 8))  # general (non-unit) DQs
    x = rng.standard_normal((n, 8))
    C_s, C_d = build_measurement_matrix(n, edges, dqs)
    direct = x.copy()  # C_ii = 1
    for (i, j), c in zip(edges, dqs):
        direct[i] += dq_mul(c, x[j])
        direct[j] += dq_mul(dq_conj(c), x[i])
    assert np.allclose(dq_matvec(C_s, C_d, x), direct, atol=TOL, rtol=0)


def test_hermitian_matrix_gives_symmetric_real_blocks(rng):
    n = 20
    edges = random_edges(rng, n, 0.3)
    C_s, C_d = build_measurement_matrix(n, edges, rng.standard_normal((len(edges), 8)))
    assert C_s.shape == C_d.shape == (4 * n, 4 * n)
    assert abs(C_s - C_s.T).max() == 0.0
    assert abs(C_d - C_d.T).max() == 0.0
    diagonal = C_s.toarray().reshape(n, 4, n, 4)[np.arange(n), :, np.arange(n), :]
    assert np.array_equal(diagonal, np.broadcast_to(np.eye(4), (n, 4, 4)))  # C_ii = 1 once
    assert C_s.nnz == 16 * (n + 2 * len(edges))


@pytest.mark.parametrize(
    "edges, culprit",
    [
        ([[0, 1], [1, 2], [0, 1]], "more than once"),
        ([[0, 1], [1, 2], [2, 1]], "more than once"),
        ([[0, 1], [2, 2]], "self-loops"),
        ([[0, 1], [1, 5]], "outside"),
    ],
)
def test_bad_edges_raise(edges, culprit):
    edges = np.array(edges)
    with pytest.raises(ValueError, match=culprit):
        check_edges(3, edges)
    with pytest.raises(ValueError, match=culprit):
        build_measurement_matrix(3, edges, np.tile([1.0, 0, 0, 0, 0, 0, 0, 0], (len(edges), 1)))
