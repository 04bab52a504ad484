"""2-Wasserstein barycenters: of discrete measures with free support (POT's LP solver), and the closed form for
diagonal Gaussians (the barycenter's std is the weighted mean of the stds, not of the variances)."""
from __future__ import annotations

import numpy as np


def free_support_barycenter(locations: list[np.ndarray], masses: list[np.ndarray], weights: np.ndarray,
                            n_support: int, rng: np.random.Generator, iterations: int = 50) -> np.ndarray:
    """The W2 barycenter with weights `weights` of the measures sum_j masses[k][j] delta(locations[k][j]), on
    n_support points of uniform mass (fewer when the inputs pool fewer points), started from points drawn without
    replacement from the pooled input support. Returns [n_support', d]."""
    import ot

    pooled = np.concatenate(locations)
    n_support = min(n_support, len(pooled))
    start = pooled[rng.choice(len(pooled), size=n_support, replace=False)]
    weights = np.asarray(weights, dtype=np.float64)
    return ot.lp.free_support_barycenter([np.asarray(x, dtype=np.float64) for x in locations],
                                         [np.asarray(m, dtype=np.float64) / np.sum(m) for m in masses],
                                         start.astype(np.float64), weights=weights / weights.sum(),
                                         numItermax=iterations)


def diagonal_gaussian_barycenter(means: np.ndarray, stds: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The exact W2 barycenter of N(means[k], diag(stds[k]^2)) with weights: (sum w m_k, sum w s_k)."""
    w = np.asarray(weights, dtype=np.float64)
    w = w / w.sum()
    return np.tensordot(w, means, axes=1), np.tensordot(w, stds, axes=1)


def diagonal_gaussian_w2_squared(m1: np.ndarray, s1: np.ndarray, m2: np.ndarray, s2: np.ndarray) -> float:
    """W2^2 between N(m1, diag s1^2) and N(m2, diag s2^2): |m1 - m2|^2 + |s1 - s2|^2."""
    return float(np.sum((m1 - m2) ** 2) + np.sum((s1 - s2) ** 2))
