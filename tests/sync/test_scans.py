"""Tests for the synthetic multi-scan data (spec §6(c))."""
import numpy as np
import pytest
from scipy.spatial import cKDTree
from scipy.spatial.transform import Rotation

from tasks.sync.scans import icp, kabsch, make_scans, potato_mesh, potato_surface


def _pose(R, t):
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = R, t
    return T


def _angle_deg(R):
    return float(np.degrees(np.arccos(np.clip((np.trace(R) - 1) / 2, -1, 1))))


def _relative_errors(data, relative):
    """Rotation error (deg) of each Z against `relative(i, j)`."""
    return np.array([_angle_deg(Z[:3, :3].T @ relative(i, j)[:3, :3])
                     for (i, j), Z in zip(data.graph.edges, data.graph.Z)])


@pytest.fixture(scope="module")
def smoke():
    return make_scans(6, 500, seed=3)


def test_kabsch_exact_and_proper():
    rng = np.random.default_rng(0)
    src = rng.normal(size=(50, 3)) * [3.0, 1.0, 0.3]
    T = _pose(Rotation.random(random_state=rng).as_matrix(), rng.normal(size=3))
    assert np.allclose(kabsch(src, src @ T[:3, :3].T + T[:3, 3]), T, atol=1e-12)
    mirrored = src * [1.0, 1.0, -1.0]  # best orthogonal fit is a reflection; must return a rotation
    assert np.linalg.det(kabsch(src, mirrored)[:3, :3]) == pytest.approx(1.0, abs=1e-12)


def test_icp_recovers_known_transform():
    rng = np.random.default_rng(1)
    surface, _ = potato_surface()
    source = surface[rng.choice(len(surface), 2000, replace=False)]
    T_true = _pose(Rotation.random(random_state=rng).as_matrix(), rng.normal(size=3))
    target = source @ T_true[:3, :3].T + T_true[:3, 3]
    wiggle = _pose(Rotation.from_rotvec(np.deg2rad(2.0) * np.array([0.6, -0.8, 0.0])).as_matrix(),
                   [0.02, -0.01, 0.015])
    T, rmse, iterations = icp(source, target, wiggle @ T_true)
    assert np.abs(T - T_true).max() < 1e-6
    assert rmse < 1e-6 and 1 <= iterations <= 50


def test_potato_is_asymmetric_and_in_radius_band():
    radius = np.linalg.norm(potato_mesh().vertices, axis=1)
    assert 0.7 <= radius.min() and radius.max() <= 1.3
    assert radius.max() - radius.min() > 0.2


def test_deterministic_for_seed(smoke):
    again = make_scans(6, 500, seed=3)
    for a, b in [(smoke.graph.edges, again.graph.edges), (smoke.graph.Z, again.graph.Z),
                 (smoke.truth.R, again.truth.R), (smoke.truth.t, again.truth.t),
                 (smoke.icp_rmse, again.icp_rmse)]:
        assert np.array_equal(a, b)
    assert all(np.array_equal(p, q) for p, q in zip(smoke.points, again.points))
    other = make_scans(6, 500, seed=4)
    assert not np.array_equal(smoke.truth.R, other.truth.R)


def test_smoke_profile_shapes_and_ring(smoke):
    g = smoke.graph
    assert g.n == 6 and g.edges.shape == (6, 2) and g.Z.shape == (6, 4, 4)
    assert np.all(np.bincount(g.edges.ravel(), minlength=6) == 2)
    assert {tuple(e) for e in g.edges} == {(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (0, 5)}
    assert all(p.shape == (500, 3) for p in smoke.points)
    assert smoke.icp_rmse.shape == (6,) and smoke.icp_time > 0
    for R in (*smoke.truth.R, *g.Z[:, :3, :3]):
        assert np.allclose(R.T @ R, np.eye(3), atol=1e-9) and np.linalg.det(R) > 0


def test_truth_is_inverse_of_scan_to_world(smoke):
    for k in range(6):
        G = _pose(smoke.truth.R[k], smoke.truth.t[k])
        T = _pose(smoke.scan_to_world.R[k], smoke.scan_to_world.t[k])
        assert np.allclose(G @ T, np.eye(4), atol=1e-12)


def test_measurements_follow_the_G_convention(smoke):
    """Z_ij ~ G_i G_j^{-1}; the other conventions would be off by random rotations."""
    G = [_pose(R, t) for R, t in zip(smoke.truth.R, smoke.truth.t)]
    right = _relative_errors(smoke, lambda i, j: G[i] @ np.linalg.inv(G[j]))
    wrong = _relative_errors(smoke, lambda i, j: np.linalg.inv(G[i]) @ G[j])
    swapped = _relative_errors(smoke, lambda i, j: G[j] @ np.linalg.inv(G[i]))
    # 500 points, 60-degree view separation: point-to-point ICP is strongly biased here
    # (median ~15-20 deg for seeds 0-5, even when started at the truth), so this checks the
    # convention, not ICP accuracy; see test_icp_improves_the_initial_guess_on_close_views.
    assert right.max() < 40.0
    assert np.median(right) < 0.3 * min(np.median(wrong), np.median(swapped))


def test_icp_improves_the_initial_guess_on_close_views():
    """30-degree-apart scans with 3000 points: ICP beats the 5-degree initial error (median)."""
    data = make_scans(12, 3000, seed=0, max_angle_deg=40.0)
    assert len(data.graph.edges) == 12
    G = [_pose(R, t) for R, t in zip(data.truth.R, data.truth.t)]
    errors = _relative_errors(data, lambda i, j: G[i] @ np.linalg.inv(G[j]))
    assert np.median(errors) < 5.0


def test_points_overlay_the_surface():
    surface, _ = potato_surface()
    tree = cKDTree(surface)
    exact = make_scans(6, 500, seed=3, noise=0.0)
    noisy = make_scans(6, 500, seed=3)
    for data, tol in [(exact, 1e-9), (noisy, 0.005 * 6)]:
        for p, R, t in zip(data.points, data.scan_to_world.R, data.scan_to_world.t):
            world = p @ R.T + t
            assert tree.query(world)[0].max() < tol


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="n_pts"):
        make_scans(6, 50_000, seed=0)
    with pytest.raises(ValueError, match="n_scans"):
        make_scans(1, 100, seed=0)
