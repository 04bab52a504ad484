"""Spec §10.7: the test-time corruption operators."""
from __future__ import annotations

import numpy as np
import pytest

from tasks.sets.corruptions import Corruption, OutlierRegion, apply, drop, local_drop, outliers, uniform_ball

CUBE = OutlierRegion(low=(-1.0,) * 3, high=(1.0,) * 3)


def clouds() -> np.ndarray:
    return np.random.default_rng(0).uniform(-0.5, 0.5, size=(8, 40, 3)).astype(np.float32)


def test_outliers_replace_exactly_round_rn_points_inside_the_cube():
    X = clouds()
    Y = outliers(X, 0.3, OutlierRegion(low=(-2.0,) * 3, high=(2.0,) * 3), np.random.default_rng(1))
    changed = (Y != X).any(axis=2)
    assert (changed.sum(axis=1) == 12).all() and Y.shape == X.shape
    assert (np.abs(Y) <= 2).all()


def test_drop_keeps_n_minus_round_rn_of_the_points():
    X = clouds()
    Y = drop(X, 0.75, np.random.default_rng(1))
    assert Y.shape == (8, 10, 3)
    for x, y in zip(X, Y):
        assert all(any((row == p).all() for row in x) for p in y)


def test_local_drop_removes_the_nearest_points():
    X = clouds()
    Y = local_drop(X, 0.25, np.random.default_rng(2))
    assert Y.shape == (8, 30, 3)
    for x, y in zip(X, Y):
        removed = np.array([p for p in x if not any((p == q).all() for q in y)])
        # some removed point is the centre: every removed point is at least as near to it as every kept one
        assert any(np.linalg.norm(removed - c, axis=1).max() <= np.linalg.norm(y - c, axis=1).min() for c in removed)


def test_seeded_and_reproducible():
    X = clouds()
    for corruption in (Corruption(kind="outliers", r=0.2), Corruption(kind="drop", r=0.5), Corruption(kind="local_drop", r=0.5)):
        one = apply(X, corruption, np.random.default_rng(5), CUBE)
        two = apply(X, corruption, np.random.default_rng(5), CUBE)
        assert np.array_equal(one, two)
    assert apply(X, Corruption(kind="clean"), np.random.default_rng(0), CUBE) is X
    assert Corruption(kind="local_drop", r=0.25).name == "local_drop-0.25"
    with pytest.raises(ValueError, match=r"r\n.*less than 1"):
        Corruption(kind="drop", r=1.0)


def test_uniform_ball_inside_the_unit_ball():
    points = uniform_ball((100, 5), 3, np.random.default_rng(0))
    assert points.shape == (100, 5, 3) and (np.linalg.norm(points, axis=-1) <= 1 + 1e-12).all()


def test_outliers_outside_a_ball_lie_in_the_box_and_never_in_the_ball():
    region = OutlierRegion(low=(-1.0,) * 3, high=(1.0,) * 3, outside_radius=1.0)
    points = region.sample((50, 40), np.random.default_rng(0))
    norms = np.linalg.norm(points, axis=-1)
    assert points.shape == (50, 40, 3) and (np.abs(points) <= 1).all() and (norms > 1).all()
    assert norms.max() > 1.5  # the cube's corners are reached, not only a thin shell
    assert np.array_equal(points, region.sample((50, 40), np.random.default_rng(0)))
    Y = outliers(clouds(), 0.3, region, np.random.default_rng(1))
    assert (np.linalg.norm(Y, axis=2) > 1).sum(axis=1).tolist() == [12] * 8  # the clouds lie in the ball


def test_a_whole_box_is_one_uniform_draw():
    assert np.array_equal(CUBE.sample((4, 5), np.random.default_rng(3)),
                          np.random.default_rng(3).uniform(-1.0, 1.0, size=(4, 5, 3)))


@pytest.mark.parametrize("values", [{"low": (-1.0,) * 3, "high": (1.0,) * 3, "outside_radius": 1.8},
                                    {"low": (0.0, 0.0), "high": (1.0, 0.0)}])
def test_an_empty_region_is_refused(values):
    with pytest.raises(ValueError, match="ball of radius|is empty"):
        OutlierRegion(**values)
