"""Label-skewed client splits: for each class, client shares drawn from Dirichlet(alpha * 1_K) (Hsu et al. 2019).
Smaller alpha means more heterogeneous clients."""
from __future__ import annotations

import numpy as np


def dirichlet_label_split(labels: np.ndarray, n_clients: int, alpha: float, rng: np.random.Generator) -> list[np.ndarray]:
    """Index arrays, one per client, that together hold every index of `labels` exactly once (a client may be empty)."""
    if n_clients < 1:
        raise ValueError(f"n_clients: must be >= 1, got {n_clients}")
    if not alpha > 0:
        raise ValueError(f"alpha: must be > 0, got {alpha}")
    parts: list[list[np.ndarray]] = [[] for _ in range(n_clients)]
    for c in np.unique(labels):
        members = rng.permutation(np.flatnonzero(labels == c))
        shares = rng.dirichlet(np.full(n_clients, alpha))
        cuts = np.round(np.cumsum(shares)[:-1] * len(members)).astype(int)
        for k, chunk in enumerate(np.split(members, cuts)):
            parts[k].append(chunk)
    return [np.sort(np.concatenate(chunks)).astype(np.int64) for chunks in parts]


def label_entropy(labels: np.ndarray, n_classes: int) -> float:
    """Shannon entropy (nats) of a client's label histogram; 0 for an empty client."""
    if len(labels) == 0:
        return 0.0
    p = np.bincount(labels, minlength=n_classes) / len(labels)
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())
