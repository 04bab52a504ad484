"""Wall-time measurements of the methods, one run at a time."""
from __future__ import annotations

from itertools import product
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from .methods import METHODS
from .store import load_instance


def time_methods(paths: list[Path], methods: list[str], options: dict[str, dict], repeats: int) -> list[dict]:
    """Median-ready wall times of each method on each instance, BLAS on 1 thread and default.

    One thread is the claim's setting: OpenBLAS threading on ARPACK's small dense steps slows
    EIG down erratically on small machines, which would weaken the baseline. The library
    default is measured alongside and reported.
    """
    rows = []
    for path, method, threads in product(paths, methods, (1, None)):
        instance = load_instance(path)
        with threadpool_limits(limits=threads):
            times = [METHODS[method](instance.graph, **options.get(method, {})).wall_time for _ in range(repeats)]
        rows.append({"instance": path.stem, "purpose": instance.meta["purpose"], "n": instance.graph.n,
                     "edges": len(instance.graph.edges), "method": method, "blas_threads": threads or "default",
                     "times": times, "median": float(np.median(times))})
    return rows
