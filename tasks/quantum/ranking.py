"""How well a score ranks the partitions of one graph: Spearman correlation inside each graph, and the mean of
it over graphs (the critic's check, C3, and the choice of the generator's scorer, spec §3.4-3.5 and issue 42).

A pooled correlation over many graphs also credits a score for telling easy graphs from hard ones; a
within-graph one does not, and ranking the partitions of one graph is all the generator and the test-time
adaptation ask of a scorer.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.stats import rankdata


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rank correlation (ties share their mean rank); nan where it is undefined (fewer than 2 values,
    or either side constant)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(np.corrcoef(rankdata(x), rankdata(y))[0, 1])


def per_graph_spearman(scores: Sequence[float], rho: Sequence[float], graphs: Sequence) -> dict:
    """graph -> Spearman(scores, rho) over that graph's samples (nan where undefined), in sorted graph order."""
    scores, rho, graphs = np.asarray(scores, dtype=float), np.asarray(rho, dtype=float), np.asarray(graphs)
    return {g: spearman(scores[graphs == g], rho[graphs == g]) for g in sorted(set(graphs.tolist()))}


def mean_within_spearman(scores: Sequence[float], rho: Sequence[float], graphs: Sequence) -> float:
    """The mean over graphs of per_graph_spearman, graphs where it is undefined left out (nan if all are)."""
    values = [v for v in per_graph_spearman(scores, rho, graphs).values() if np.isfinite(v)]
    return float(np.mean(values)) if values else float("nan")
