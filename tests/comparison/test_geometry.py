"""Our manifold operations against pymanopt, and the spec's tangency, normalisation and preservation checks."""
from __future__ import annotations

import numpy as np
from pymanopt.manifolds import SymmetricPositiveDefinite

from tasks.comparison.geometry import SimplexGeometry, SphereGeometry, SPDGeometry, StiefelGeometry, make_geometry


def test_unit_tangents_are_tangent_and_unit_in_the_metric():
    rng = np.random.default_rng(0)
    sphere = SphereGeometry(7)
    x = sphere.manifold.random_point()
    u = sphere.unit_tangent(x, rng)
    assert abs(u @ x) < 1e-12 and abs(np.linalg.norm(u) - 1) < 1e-12
    spd = SPDGeometry(4)
    X = spd.manifold.random_point()
    U = spd.unit_tangent(X, rng)
    assert np.allclose(U, U.T) and abs(spd.manifold.norm(X, U) - 1) < 1e-10
    stiefel = StiefelGeometry(6, 2)
    Y = stiefel.manifold.random_point()
    V = stiefel.unit_tangent(Y, rng)
    assert np.abs(Y.T @ V + V.T @ Y).max() < 1e-12 and abs(stiefel.manifold.norm(Y, V) - 1) < 1e-12
    simplex = SimplexGeometry(5)
    W = simplex.unit_tangents(rng, 10)
    assert np.abs(W.sum(1)).max() < 1e-12 and np.allclose(np.linalg.norm(W, axis=1), 1)


def test_spd_directions_are_isotropic_in_the_affine_invariant_metric():
    """Whitened coordinates X^-1/2 U X^-1/2 of the unit directions: second moment I / dim on Sym(n)."""
    rng, spd = np.random.default_rng(1), SPDGeometry(3)
    X = np.diag([0.2, 1.0, 5.0])
    inv_half = np.diag(1 / np.sqrt(np.diag(X)))
    W = np.array([inv_half @ spd.unit_tangent(X, rng) @ inv_half for _ in range(20000)])
    coords = np.stack([W[:, 0, 0], W[:, 1, 1], W[:, 2, 2], np.sqrt(2) * W[:, 0, 1], np.sqrt(2) * W[:, 0, 2],
                       np.sqrt(2) * W[:, 1, 2]], axis=1)
    assert np.allclose(coords.T @ coords / len(W), np.eye(6) / 6, atol=0.01)


def test_our_spd_exp_is_pymanopts_and_log_inverts_exp():
    rng = np.random.default_rng(2)
    spd, reference = SPDGeometry(5), SymmetricPositiveDefinite(5)
    X = reference.random_point()
    for scale in (0.1, 1.0, 1.5):
        V = scale * spd.unit_tangent(X, rng)
        assert np.abs(spd.exp(X, V) - reference.exp(X, V)).max() < 1e-10
        assert np.abs(spd.log(X, spd.exp(X, V)) - V).max() < 1e-10
    sphere = SphereGeometry(6)
    x = sphere.manifold.random_point()
    for scale in (0.1, 1.0, 1.5):
        v = scale * sphere.unit_tangent(x, rng)
        assert np.abs(sphere.log(x, sphere.exp(x, v)) - v).max() < 1e-10


def test_ten_thousand_steps_stay_on_the_manifold():
    rng = np.random.default_rng(3)
    sphere, spd, simplex = SphereGeometry(10), SPDGeometry(3), SimplexGeometry(6)
    x, X, s = sphere.manifold.random_point(), np.eye(3), np.full(6, 1 / 6)
    for k in range(10_000):
        x = sphere.exp(x, 0.3 * sphere.unit_tangent(x, rng))
        X = spd.exp(X, 0.05 * spd.unit_tangent(X, rng))
        s = s + 2 / (k + 3) * (simplex.lmo(s, rng.standard_normal(6)) - s)
    assert abs(np.linalg.norm(x) - 1) < 1e-10
    assert np.linalg.eigvalsh(X)[0] > 0 and np.allclose(X, X.T)
    assert simplex.contains(s)


def test_to_manifold_maps_back_and_counts():
    rng = np.random.default_rng(4)
    for name, dim in (("sphere", 5), ("spd", 3), ("stiefel", 5), ("simplex", 5)):
        geometry = make_geometry(name, dim)
        assert geometry.contains(geometry.to_manifold(rng.standard_normal(geometry.shape) + 0.1), tol=1e-9)
        assert geometry.projections == 1
