"""One-vs-rest linear SVMs on feature vectors, by liblinear (scikit-learn's LinearSVC), their geometric
margins, and the exact dual of the same problem solved by cvxpy, the reference the solver is tested against.

LinearSVC's problem, per class k with t_i = +1 for class k and -1 otherwise (squared hinge, the library
default; liblinear regularises the bias as the weight of a constant feature `intercept_scaling`):
    min_w  1/2 |w|^2 + C sum_i max(0, 1 - t_i w.x~_i)^2,   x~_i = (x_i, intercept_scaling).
Its dual (Hsieh et al. 2008): min_{a >= 0} 1/2 a^T (Q + I / (2C)) a - sum a,  Q_ij = t_i t_j x~_i.x~_j,
with w = sum_i a_i t_i x~_i.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC  # at import, not in the first fit: a timed training loop must not pay it


@dataclass(frozen=True)
class LinearSVM:
    """weights [C, D], biases [C]: one hyperplane per class (two classes give two mirrored ones, so the
    score of class k is always weights[k] . x + biases[k]); converged: liblinear met its tolerance."""

    weights: np.ndarray
    biases: np.ndarray
    converged: bool

    def scores(self, features: np.ndarray) -> np.ndarray:
        return features @ self.weights.T + self.biases

    def predict(self, features: np.ndarray) -> np.ndarray:
        return self.scores(features).argmax(1)


def fit_ovr_svm(features: np.ndarray, labels: np.ndarray, n_classes: int, C: float = 1.0, max_iter: int = 5000,
                random_state: int = 0) -> LinearSVM:
    """LinearSVC (one-vs-rest, squared hinge, dual="auto") on features [N, D] with labels in 0..n_classes-1,
    every class present. A fixed random_state: a refit never draws from any other generator."""
    present = np.unique(labels)
    if n_classes < 2 or len(present) != n_classes or present[0] != 0 or present[-1] != n_classes - 1:
        raise ValueError(f"labels: must hold every class 0..{n_classes - 1} (n_classes >= 2), got {present.tolist()}")
    svm = LinearSVC(C=C, dual="auto", max_iter=max_iter, random_state=random_state)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # recorded as `converged` instead
        svm.fit(np.asarray(features, dtype=np.float64), labels)
    weights, biases = svm.coef_, svm.intercept_
    if n_classes == 2:  # liblinear fits one hyperplane, positive for class 1
        weights, biases = np.vstack([-weights, weights]), np.concatenate([-biases, biases])
    return LinearSVM(weights.copy(), biases.copy(), bool(np.max(svm.n_iter_) < max_iter))


def label_signs(labels: np.ndarray, n_classes: int) -> np.ndarray:
    """t [N, C]: +1 where k is the sample's class, -1 elsewhere."""
    return np.where(np.arange(n_classes)[None, :] == np.asarray(labels)[:, None], 1.0, -1.0)


def geometric_margins(features: np.ndarray, labels: np.ndarray, svm: LinearSVM) -> np.ndarray:
    """gamma [N, C] = t_ik (w_k . x_i + b_k) / |w_k|: signed distance of each sample to each hyperplane,
    positive on its correct side."""
    return label_signs(labels, len(svm.biases)) * svm.scores(features) / np.linalg.norm(svm.weights, axis=1)


def own_class_margins(features: np.ndarray, labels: np.ndarray, svm: LinearSVM) -> np.ndarray:
    """gamma_{i, y_i}: each sample's geometric margin to its own class's hyperplane."""
    return geometric_margins(features, labels, svm)[np.arange(len(labels)), labels]


def squared_hinge_dual(features: np.ndarray, signs: np.ndarray, C: float,
                       intercept_scaling: float = 1.0) -> tuple[np.ndarray, float]:
    """(w, b) of one binary problem of the module docstring, from its dual solved by cvxpy (the reference
    for fit_ovr_svm; O(N^2) memory, for small N)."""
    import cvxpy as cp

    augmented = np.hstack([features, np.full((len(features), 1), intercept_scaling)]) * signs[:, None]
    alpha = cp.Variable(len(features), nonneg=True)
    # 1/2 a^T Q a = 1/2 |augmented^T a|^2: the quadratic in a form cvxpy accepts as convex
    objective = 0.5 * cp.sum_squares(augmented.T @ alpha) + cp.sum_squares(alpha) / (4 * C) - cp.sum(alpha)
    cp.Problem(cp.Minimize(objective)).solve()
    w = augmented.T @ alpha.value
    return w[:-1], float(w[-1] * intercept_scaling)
