"""The data types every SE(3) synchronization method reads and returns.

Convention (spec §2): node i has an unknown pose G_i = (R_i, t_i); an edge (i, j)
carries a measurement Z_ij ~ G_i G_j^{-1} as a 4x4 homogeneous matrix. Estimates are defined
up to one global right-multiplication G_i -> G_i H.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class PoseGraph:
    """A measured pose graph.

    n: number of nodes.
    edges: (m, 2) int array of node pairs (i, j), no self-loops, no duplicates.
    Z: (m, 4, 4) relative poses, Z[k] ~ G_i G_j^{-1} for edges[k] = (i, j).
    dq: optional (m, 8) measured dual quaternions [standard(4) | dual(4)] for the same edges.
        Set only where the noise lives on the dual quaternions themselves (the `additive`
        model); DQ methods then use it instead of converting Z, matrix methods keep using Z.
    """

    n: int
    edges: np.ndarray
    Z: np.ndarray
    dq: np.ndarray | None = None


@dataclass(frozen=True)
class Poses:
    """Absolute poses: R (n, 3, 3) proper rotations, t (n, 3) translations."""

    R: np.ndarray
    t: np.ndarray


@dataclass
class SyncResult:
    """What every method and baseline returns (one shape, so callers need no special cases).

    poses: the estimate (gauge-free: compare after alignment).
    iterations: iterations of the method's main loop (0 for closed-form methods).
    history: per-iteration change of the iterate, for the DQ methods the largest per-node change
        of the rotation part max_i ||s_i^{k+1} - s_i^k|| (info["translation_history"] holds the
        translation part); empty for closed-form methods.
    wall_time: seconds spent in matrix build + solver + rounding (perf_counter).
    method: the method's name.
    info: extra method-specific numbers (e.g. power-method iterations of the initializer).
    converged: False when an iterative method stopped at its max_iter before its stopping rule
        held (closed-form methods: True).
    message: why the method stopped, in words.
    """

    poses: Poses
    iterations: int
    history: list[float]
    wall_time: float
    method: str
    info: dict = field(default_factory=dict)
    converged: bool = True
    message: str = ""


def connected_components(n: int, edges: np.ndarray) -> list[np.ndarray]:
    """Node sets of the connected components, largest first."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components as _components

    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    adjacency = coo_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(n, n))
    count, labels = _components(adjacency, directed=False)
    groups = [np.flatnonzero(labels == c) for c in range(count)]
    return sorted(groups, key=len, reverse=True)
