"""Spec §10.8: the generated set datasets (trimesh primitive clouds, digit point sets)."""
from __future__ import annotations

import numpy as np

from tasks.sets.digit_sets import HIGH, LOW, digit_sets
from tasks.sets.primitive_clouds import CLASSES, primitive_clouds


def test_every_class_is_centred_with_max_norm_one_and_reproducible():
    X, y = primitive_clouds(CLASSES, 3, 48, seed=4)
    assert X.shape == (21, 48, 3) and X.dtype == np.float32 and np.bincount(y).tolist() == [3] * 7
    assert np.allclose(X.mean(axis=1), 0, atol=1e-6)
    assert np.allclose(np.linalg.norm(X, axis=2).max(axis=1), 1, atol=1e-6)
    again, _ = primitive_clouds(CLASSES, 3, 48, seed=4)
    assert np.array_equal(X, again)
    other, _ = primitive_clouds(CLASSES, 3, 48, seed=5)
    assert not np.array_equal(X, other)


def test_class_is_not_in_point_count_or_scale():
    X, y = primitive_clouds(CLASSES[:5], 4, 32, seed=0)
    assert len({x.shape for x in X}) == 1  # the same number of points for every class
    scale = np.linalg.norm(X, axis=2).max(axis=1)
    assert np.ptp(scale) < 1e-6  # the normalisation removes size


def test_digit_sets_in_their_box():
    sets = digit_sets(24, seed=0, test_fraction=0.3)
    X = np.concatenate([sets["X_train"], sets["X_test"]])
    assert X.shape[1:] == (24, 3) and len(X) == 1797
    assert (X >= LOW - 1e-6).all() and (X <= HIGH + 1e-6).all() and (X[..., 2] >= 0.25 - 1e-6).all()
    assert np.array_equal(digit_sets(24, 0, 0.3)["X_test"], sets["X_test"])
