"""Errors of every run against the truth, and the claim checks C1-C3 of spec se3_sync §6.

Aggregation follows spec §5: per trial the median over nodes, over trials the median.
`decide=False` (profiles too small to decide) reports the numbers with passed = None.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from tasks.core.claims import Claim

from .metrics import pose_errors, summarize
from .store import load_instance, load_result


def error_rows(instances: list[Path], runs: Path, methods: list[str]) -> list[dict]:
    """One row per (instance, method): family, sigma, trial, error summary, iterations, time."""
    rows = []
    for path in instances:
        instance = load_instance(path)
        for method in methods:
            result = load_result(runs / f"{method}__{path.stem}.npz")
            rot, trans = pose_errors(result.poses, instance.truth)
            rows.append({"family": instance.meta["family"], "sigma": instance.meta["sigma"],
                         "trial": instance.meta["trial"], "method": method, **summarize(rot, trans),
                         "iterations": result.iterations, "wall_time": result.wall_time})
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


def _decided(passed: bool, decide: bool) -> bool | None:
    return bool(passed) if decide else None


def accuracy_claim(rows: list[dict], limit: float, decide: bool, setting: str) -> Claim:
    """C1: DQGPM's error <= limit x EIG's at every noise level, rotation and translation."""
    ratios = {}
    for key in ("rot_median", "trans_median"):
        dq, eig = median_by(rows, "geometric", "dqgpm", key), median_by(rows, "geometric", "eig", key)
        spectral = median_by(rows, "geometric", "dq_spectral", key)
        ratios[key] = {f"{s:g}": {"dqgpm": dq[s], "eig": eig[s], "ratio_vs_eig": dq[s] / eig[s] if eig[s] else None,
                                  "ratio_vs_dq_spectral": dq[s] / spectral[s] if spectral.get(s) else None}
                       for s in dq}
    worst = max(v["ratio_vs_eig"] for per_sigma in ratios.values() for v in per_sigma.values() if v["ratio_vs_eig"] is not None)
    return Claim("C1", f"DQGPM median rotation and translation error <= {limit} x EIG's at every noise level",
                 "improves accuracy over matrix-based methods (no number readable)", worst, limit,
                 _decided(worst <= limit, decide), {"setting": setting, **ratios})


def median_times(timing: list[dict], purpose: str, threads) -> dict[str, float]:
    """method -> median wall time over the timing rows of `purpose` at `threads` BLAS threads."""
    rows = [r for r in timing if r["purpose"] == purpose and r["blas_threads"] == threads]
    return {m: float(np.median([t for r in rows if r["method"] == m for t in r["times"]]))
            for m in sorted({r["method"] for r in rows})}


def efficiency_claim(timing: list[dict], decide: bool, setting: str) -> Claim:
    """C2: the whole DQ pipeline's wall time <= EIG's, BLAS on one thread (default threads reported too)."""
    single, default = median_times(timing, "claim", 1), median_times(timing, "claim", "default")
    ratio = single["dqgpm"] / single["eig"]
    return Claim("C2", "DQ pipeline (C build, power method, DQGPM, poses) wall time <= EIG's",
                 "faster than matrix-based methods (no number readable)", ratio, 1.0, _decided(ratio <= 1.0, decide),
                 {"setting": setting, "median_wall_time_s_blas_1_thread": single, "median_wall_time_s_blas_default_threads": default,
                  "ratio_blas_default_threads": default["dqgpm"] / default["eig"]})


def registration_claim(rows: list[dict], limit: float, decide: bool, setting: str) -> Claim:
    """C3 (scans): DQGPM's errors <= limit x EIG's, and its rotation error <= chaining's."""
    methods = sorted({r["method"] for r in rows if r["family"] == "scans"})
    medians = {m: {k: float(np.median([r[k] for r in rows if (r["family"], r["method"]) == ("scans", m)]))
                   for k in ("rot_median", "trans_median")} for m in methods}
    rot_vs_eig = medians["dqgpm"]["rot_median"] / medians["eig"]["rot_median"]
    trans_vs_eig = medians["dqgpm"]["trans_median"] / medians["eig"]["trans_median"]
    rot_vs_chain = medians["dqgpm"]["rot_median"] / medians["chain"]["rot_median"] if "chain" in medians else None
    worst = max(rot_vs_eig, trans_vs_eig)
    passed = worst <= limit and (rot_vs_chain is None or rot_vs_chain <= 1.0)
    return Claim("C3", f"scan registration: DQGPM median rotation and translation error <= {limit} x EIG's, "
                 "rotation error <= spanning-tree chaining's",
                 "lower rotation/translation errors than matrix-based methods (no number readable)", worst, limit,
                 _decided(passed, decide), {"setting": setting, "medians": medians, "rot_ratio_vs_eig": rot_vs_eig,
                                            "trans_ratio_vs_eig": trans_vs_eig, "rot_ratio_vs_chain": rot_vs_chain})
