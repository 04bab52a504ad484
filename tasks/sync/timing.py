"""Wall-time measurements of the methods, one run at a time, the methods alternated."""
from __future__ import annotations

from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from .methods import METHODS
from .store import Instance, load_instance

Variants = dict[str, tuple[str, dict]]  # label -> (method, options)


def rotated(labels: list[str], round_: int) -> list[str]:
    """The order of one round: each label leads in turn, so none is always timed first (or last)."""
    shift = round_ % len(labels)
    return labels[shift:] + labels[:shift]


def warm_up(paths: list[Path], variants: dict[str, Variants]) -> None:
    """Run every variant once on the first instance of each graph family, so that loading compiled kernels and
    first-touch costs stay outside the times (the one-shot cost is benchmarks/se3_sync_oneshot.py's)."""
    firsts: dict[str, Instance] = {}
    for path in paths:
        instance = load_instance(path)
        firsts.setdefault(instance.meta.get("graph", "er"), instance)
    for family, instance in firsts.items():
        for method, options in variants[family].values():
            METHODS[method](instance.graph, **options)


def time_methods(paths: list[Path], variants: dict[str, Variants], repeats: int, threads: tuple = (1,)) -> list[dict]:
    """Wall times of each variant of an instance's graph family (variants: family -> label -> (method, options)) on
    each instance: `repeats` rounds, every variant once per round in a rotating order, so that round r of two
    variants ran side by side (times[r] pair up across the rows of one instance).

    BLAS on 1 thread is the claim's setting (OpenBLAS threading on ARPACK's small dense steps slows EIG down
    erratically on small machines, which would weaken the baseline); None is the library default. Rows also carry
    each run's iterations and convergence flag.
    """
    warm_up(paths, variants)
    rows = []
    for path in paths:
        instance = load_instance(path)
        family = instance.meta.get("graph", "er")
        mine = variants[family]
        for limit in threads:
            results: dict[str, list] = {label: [] for label in mine}
            with threadpool_limits(limits=limit):
                for round_ in range(repeats):
                    for label in rotated(list(mine), round_):
                        method, options = mine[label]
                        results[label].append(METHODS[method](instance.graph, **options))
            rows += [timing_row(instance, path, family, label, limit, runs) for label, runs in results.items()]
    return rows


def timing_row(instance: Instance, path: Path, family: str, label: str, limit: int | None, runs: list) -> dict:
    times = [r.wall_time for r in runs]
    return {"instance": path.stem, "purpose": instance.meta["purpose"], "family": family, "n": instance.graph.n,
            "p": instance.meta.get("p"), "edges": len(instance.graph.edges), "method": label,
            "blas_threads": limit or "default", "times": times, "median": float(np.median(times)),
            "iterations": runs[0].iterations, "power_iterations": runs[0].info.get("power_iterations"),
            "converged": bool(runs[0].converged)}
