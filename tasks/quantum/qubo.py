"""QUBO -> MaxCut on n + 1 nodes (spec §2).

For max xᵀQx over x ∈ {0,1}^n with Q symmetric, add node 0 and let x_i = [s_{i+1} ≠ s_0]
(variable i is node i + 1). With
  w_{i+1, j+1} = −Q_ij (i < j),   w_{0, i+1} = Σ_j Q_ij (row sum, diagonal included),
Cut(s) = xᵀQx exactly: a cut edge (0, i) pays its row sum, and the pair edges subtract the
off-diagonal terms that the row sums count for x_i = 1, x_j = 0.
"""
from __future__ import annotations

import numpy as np

from tasks.quantum.graph import WeightedGraph


def qubo_to_maxcut(Q: np.ndarray) -> WeightedGraph:
    """The MaxCut graph on n + 1 nodes whose cut equals xᵀQx. A non-symmetric Q is replaced by
    (Q + Qᵀ)/2, which has the same xᵀQx. Zero weights are dropped."""
    Q = np.asarray(Q, dtype=float)
    if Q.ndim != 2 or Q.shape[0] != Q.shape[1] or Q.shape[0] < 1:
        raise ValueError(f"Q must be a non-empty square matrix, got shape {Q.shape}")
    if not np.all(np.isfinite(Q)):
        raise ValueError("Q must have finite entries")
    Q = 0.5 * (Q + Q.T)
    n = Q.shape[0]
    iu, ju = np.triu_indices(n, 1)
    edges = np.concatenate([np.stack([np.zeros(n, dtype=int), np.arange(1, n + 1)], axis=1),
                            np.stack([iu + 1, ju + 1], axis=1)])
    weights = np.concatenate([Q.sum(axis=1), -Q[iu, ju]])
    keep = weights != 0
    return WeightedGraph(n + 1, edges[keep].astype(int), weights[keep])


def assignment_from_sides(sides: np.ndarray) -> np.ndarray:
    """x (n,) 0/1 from the n + 1 node sides of the reduced graph: x_i = [s_{i+1} ≠ s_0]."""
    sides = np.asarray(sides)
    if sides.ndim != 1 or sides.size < 2:
        raise ValueError(f"sides must be a 1-D array over n + 1 >= 2 nodes, got shape {sides.shape}")
    return (sides[1:] != sides[0]).astype(int)
