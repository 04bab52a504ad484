"""The se3_sync error tables: every run's pose errors against the truth, aggregated per noise level.

Aggregation follows spec §5: per trial the median over nodes, over trials the median.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from tasks.sync.metrics import pose_errors, summarize
from tasks.sync.store import load_instance, load_result


def error_rows(instances: list[Path], runs: Path, methods: list[str]) -> list[dict]:
    """One row per (instance, method): family, sigma, trial, error summary, iterations, convergence
    flag (False: the method stopped at its max_iter), time."""
    rows = []
    for path in instances:
        instance = load_instance(path)
        for method in methods:
            result = load_result(runs / f"{method}__{path.stem}.npz")
            rot, trans = pose_errors(result.poses, instance.truth)
            rows.append({"family": instance.meta["family"], "sigma": instance.meta["sigma"],
                         "trial": instance.meta["trial"], "method": method, **summarize(rot, trans),
                         "iterations": result.iterations, "converged": result.converged,
                         "wall_time": result.wall_time})
    return rows


def median_by(rows: list[dict], family: str, method: str, key: str) -> dict[float, float]:
    """sigma -> median over trials of the per-trial value `key` (empty if the method did not run)."""
    mine = [r for r in rows if (r["family"], r["method"]) == (family, method)]
    return {s: float(np.median([r[key] for r in mine if r["sigma"] == s])) for s in sorted({r["sigma"] for r in mine})}


def error_curve(rows: list[dict], families: list[str], methods: list[str]) -> list[dict]:
    """Long table (family, method, sigma, rot_median, trans_median) of the aggregated errors."""
    return [{"family": f, "method": m, "sigma": s, "rot_median": rot, "trans_median": median_by(rows, f, m, "trans_median")[s]}
            for f in families for m in methods for s, rot in median_by(rows, f, m, "rot_median").items()]


def wide_curve(curve: list[dict], family: str) -> list[dict]:
    """One row per sigma, one column per method and error (what `dvc plots` draws)."""
    sigmas = sorted({r["sigma"] for r in curve if r["family"] == family})
    return [{"sigma": s} | {f"{r['method']}_{unit}": r[key] for r in curve if (r["family"], r["sigma"]) == (family, s)
                            for key, unit in (("rot_median", "rot_deg"), ("trans_median", "trans"))}
            for s in sigmas]
