"""Hierarchical Wasserstein Aggregation (spec §3.2): per class, level 1 is each client's discrete measure
nu_kc = sum_j m_kcj delta(q_kcj) (several modes, not one mean); level 2 is the W2 barycenter across the clients
that hold the class, weighted by pi_kc = n_kc / sum_k n_kc. Classes are aggregated separately in the common feature
space: nothing mixes classes or shrinks them toward a global centre."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tasks.federated.wasserstein import diagonal_gaussian_barycenter, free_support_barycenter


@dataclass(frozen=True)
class GlobalStatistics:
    mu: np.ndarray  # [C, D] global prototypes (weighted mean of client prototypes = mean of any W2 barycenter)
    sigma: np.ndarray  # [C, D] weighted mean of client stds (W2 barycenter of diagonal Gaussians)
    known: np.ndarray  # [C] bool: some client holds the class
    support: np.ndarray  # [C, J_bar, D] the free-support barycenter S_c (HWA-Gauss: S_c = {mu_c})
    support_n: np.ndarray  # [C] valid rows of support


def aggregate(counts: np.ndarray, protos: np.ndarray, stds: np.ndarray, sub: np.ndarray, mass: np.ndarray,
              n_support: int, rng: np.random.Generator, iterations: int = 50) -> GlobalStatistics:
    """counts [K, C], protos/stds [K, C, D], sub [K, C, J, D], mass [K, C, J] of the K clients that replied."""
    _, n_classes, d = protos.shape
    mu, sigma = np.zeros((n_classes, d)), np.zeros((n_classes, d))
    support, support_n = np.zeros((n_classes, n_support, d)), np.zeros(n_classes, np.int64)
    known = counts.sum(0) > 0
    for c in np.flatnonzero(known):
        holders = np.flatnonzero(counts[:, c] > 0)
        pi = counts[holders, c] / counts[holders, c].sum()
        mu[c], sigma[c] = diagonal_gaussian_barycenter(protos[holders, c].astype(np.float64),
                                                       stds[holders, c].astype(np.float64), pi)
        if n_support == 1:  # HWA-Gauss: with sigma_c, the W2 barycenter of the diagonal Gaussians
            points = mu[c][None]
        else:
            keep = [mass[k, c] > 0 for k in holders]
            points = free_support_barycenter([sub[k, c][m] for k, m in zip(holders, keep)],
                                             [mass[k, c][m] for k, m in zip(holders, keep)], pi, n_support, rng,
                                             iterations)
        support[c, :len(points)], support_n[c] = points, len(points)
    return GlobalStatistics(mu, sigma, known, support, support_n)


def inter_class_ratio(stats: GlobalStatistics) -> float:
    """(min distance between two global prototypes) / (mean sigma): the inter-class geometry logged each round."""
    mu = stats.mu[stats.known]
    if len(mu) < 2:
        return float("nan")
    dist = np.sqrt(((mu[:, None] - mu[None]) ** 2).sum(-1))
    return float(dist[np.triu_indices(len(mu), 1)].min() / max(stats.sigma[stats.known].mean(), 1e-12))


def prototype_distances(stats: GlobalStatistics) -> np.ndarray:
    """[C, C] Euclidean distances between the global prototypes (NaN rows for unknown classes)."""
    mu = np.where(stats.known[:, None], stats.mu, np.nan)
    return np.sqrt(((mu[:, None] - mu[None]) ** 2).sum(-1))
