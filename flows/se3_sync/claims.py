"""The claim checks C1-C3 of spec se3_sync §6, from the error rows (errors.py) and the timing runs.

`decide=False` (profiles too small to decide) reports the numbers with passed = None.
"""
from __future__ import annotations

import numpy as np

from tasks.core.claims import Claim, decided

from .errors import median_by


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
                 decided(worst <= limit, decide), {"setting": setting, **ratios})


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
                 "faster than matrix-based methods (no number readable)", ratio, 1.0, decided(ratio <= 1.0, decide),
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
                 decided(passed, decide), {"setting": setting, "medians": medians, "rot_ratio_vs_eig": rot_vs_eig,
                                            "trans_ratio_vs_eig": trans_vs_eig, "rot_ratio_vs_chain": rot_vs_chain})
