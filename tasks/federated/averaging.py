"""FedAvg's aggregation: the sample-weighted mean of client parameters (McMahan et al. 2017)."""
from __future__ import annotations

import numpy as np


def weighted_average(states: list[dict[str, np.ndarray]], counts: list[int]) -> dict[str, np.ndarray]:
    """sum_k (n_k / sum n) * state_k, key by key, accumulated in float64 and returned in each key's dtype.
    Clients with n_k = 0 are skipped; at least one client must hold data."""
    kept = [(state, n) for state, n in zip(states, counts) if n > 0]
    if not kept:
        raise ValueError("weighted_average: no client holds any data")
    total = float(sum(n for _, n in kept))
    first = kept[0][0]
    out = {}
    for key, value in first.items():
        acc = np.zeros(value.shape, dtype=np.float64)
        for state, n in kept:
            acc += (n / total) * state[key].astype(np.float64)
        out[key] = acc.astype(value.dtype)
    return out
