"""Wall-time measurements of the methods, one run at a time."""
from __future__ import annotations

from itertools import product
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from .methods import METHODS
from .store import load_instance


def time_methods(paths: list[Path], variants: dict[str, tuple[str, dict]], repeats: int,
                 threads: tuple = (1, None)) -> list[dict]:
    """Median-ready wall times of each variant (label -> (method, options)) on each instance.

    BLAS on 1 thread (the claim's setting: OpenBLAS threading on ARPACK's small dense steps slows
    EIG down erratically on small machines, which would weaken the baseline) and at the library
    default, reported alongside. Every variant runs once on the first instance before anything is
    timed, so compiling or loading the numba kernels and first-touch costs stay outside the times.
    Rows also carry each run's iterations and convergence flag.
    """
    if paths:
        first = load_instance(paths[0])
        for method, options in variants.values():
            METHODS[method](first.graph, **options)
    rows = []
    for path, (label, (method, options)), limit in product(paths, variants.items(), threads):
        instance = load_instance(path)
        with threadpool_limits(limits=limit):
            results = [METHODS[method](instance.graph, **options) for _ in range(repeats)]
        times = [r.wall_time for r in results]
        rows.append({"instance": path.stem, "purpose": instance.meta["purpose"],
                     "family": instance.meta.get("graph", "er"), "n": instance.graph.n,
                     "edges": len(instance.graph.edges), "method": label, "blas_threads": limit or "default",
                     "times": times, "median": float(np.median(times)),
                     "iterations": results[0].iterations,
                     "power_iterations": results[0].info.get("power_iterations"),
                     "converged": bool(results[0].converged)})
    return rows
