"""The OvR LinearSVC step: cross-checked against the exact dual solved by cvxpy, sane on separable features,
geometric margins as defined."""
from __future__ import annotations

import numpy as np
import pytest

from tasks.train.linear_svm import (LinearSVM, fit_ovr_svm, geometric_margins, label_signs, own_class_margins,
                                    squared_hinge_dual)


def sphere_blobs(n: int, centers: np.ndarray, spread: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    labels = np.arange(n) % len(centers)
    points = centers[labels] + spread * rng.normal(size=(n, centers.shape[1]))
    return points / np.linalg.norm(points, axis=1, keepdims=True), labels


@pytest.mark.parametrize("C", [0.1, 1.0, 10.0])
def test_liblinear_matches_the_cvxpy_dual(C):
    """Every OvR hyperplane of LinearSVC equals the one of the dual problem it solves (overlapping classes, so
    the hinge is active and C matters)."""
    u, y = sphere_blobs(60, np.eye(5)[:3], spread=0.6, seed=1)
    svm = fit_ovr_svm(u, y, 3, C=C, max_iter=100_000)
    assert svm.converged
    for k in range(3):
        w, b = squared_hinge_dual(u, np.where(y == k, 1.0, -1.0), C)
        np.testing.assert_allclose(svm.weights[k], w, atol=2e-3 * np.linalg.norm(w))
        assert abs(svm.biases[k] - b) < 2e-3 * max(1.0, abs(b))


def test_two_classes_give_two_mirrored_hyperplanes_and_separate_blobs_on_the_circle():
    """Spec §10.5: two far-apart blobs on S^1: train accuracy 1, the class-1 normal points from blob 0 to blob 1."""
    centers = np.array([[1.0, 0.0], [-1.0, 0.0]])
    u, y = sphere_blobs(40, centers, spread=0.1, seed=0)
    svm = fit_ovr_svm(u, y, 2)
    assert svm.weights.shape == (2, 2)
    np.testing.assert_array_equal(svm.weights[0], -svm.weights[1])
    assert (svm.predict(u) == y).all()
    direction = svm.weights[1] / np.linalg.norm(svm.weights[1])
    assert direction @ (centers[1] - centers[0]) / 2 > 0.99
    w, b = squared_hinge_dual(u, np.where(y == 1, 1.0, -1.0), 1.0)
    np.testing.assert_allclose(svm.weights[1], w, atol=1e-3 * np.linalg.norm(w))


def test_geometric_margins_are_signed_distances():
    svm = LinearSVM(np.array([[2.0, 0.0], [0.0, -1.0]]), np.array([-1.0, 0.5]), True)
    x, y = np.array([[1.0, 0.0], [0.0, 2.0]]), np.array([0, 1])
    expected = np.array([[(2 - 1) / 2, -(0 + 0.5) / 1], [-(0 - 1) / 2, (-2 + 0.5) / 1]])
    np.testing.assert_allclose(geometric_margins(x, y, svm), expected)
    np.testing.assert_allclose(own_class_margins(x, y, svm), [0.5, -1.5])
    np.testing.assert_array_equal(label_signs(y, 2), [[1, -1], [-1, 1]])


def test_refuses_missing_classes():
    with pytest.raises(ValueError, match="every class 0..2"):
        fit_ovr_svm(np.eye(4), np.array([0, 0, 1, 1]), 3)
