"""What the comparison-only benchmarks measure: for each method, the comparisons (or evaluations) and wall seconds
until a target first holds, over SEEDS instances, and the peak traced memory, as medians and as ratios of the
method to each baseline.

Peak memory: tracemalloc's peak over a separate run of MEMORY_QUERIES queries per method and size (tracing slows
Python loops several-fold, so the timed runs are untraced). Ratios: the method's median queries, wall time and peak
memory over each baseline's, per size. Not reached counts as infinite (the ratio is then null).
"""
from __future__ import annotations

import time
import tracemalloc

import numpy as np

SEEDS, MEMORY_QUERIES = 3, 200


class FirstHit:
    """Stops a run when `reached(x)` first holds; keeps the queries and the wall time at that point."""

    def __init__(self, reached):
        self.reached, self.start, self.queries, self.seconds = reached, time.perf_counter(), np.inf, np.inf

    def __call__(self, x, queries, info) -> bool:
        if self.reached(x):
            self.queries, self.seconds = queries, time.perf_counter() - self.start
            return True
        return False


def measured(run, first: bool) -> tuple[float, float, float]:
    """(queries, seconds, peak MiB) of run(budget): the timed run to the target, then (first seed only) a traced one
    of MEMORY_QUERIES queries for the peak memory."""
    queries, seconds = run(None)
    peak = np.nan
    if first:
        tracemalloc.start()
        run(MEMORY_QUERIES)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    return queries, seconds, peak


def size_row(size_name: str, size: int, methods: dict[str, list], ours: str) -> dict:
    medians = {name: {"queries": float(np.median([r[0] for r in rows])), "seconds": float(np.median([r[1] for r in rows])),
                      "peak_mib": float(np.nanmax([r[2] for r in rows])),
                      "reached": int(np.isfinite([r[0] for r in rows]).sum())} for name, rows in methods.items()}
    ratio = lambda a, b: a / b if np.isfinite(a) and np.isfinite(b) and b > 0 else None
    ratios = {f"{ours}_over_{name}": {key: ratio(medians[ours][key], medians[name][key])
                                      for key in ("queries", "seconds", "peak_mib")}
              for name in methods if name != ours}
    clean = {name: {k: (v if np.isfinite(v) else None) for k, v in row.items()} for name, row in medians.items()}
    return {size_name: size, "seeds": SEEDS, "methods": clean, "ratios": ratios}
