"""sps_safe claim checks C1-C3 of spec §6 on the per-method summaries over seeds (summaries.py)."""
from __future__ import annotations

import numpy as np

from tasks.core.claims import Claim, decided

from .params import P1, P2

# THE CLAIM CHECK (spec §6), fixed by the spec, not tuned
C1_M, C1_SPS_MAX_FACTOR = 1.0, 2.0
C2_MS, C2_RATIO = (10.0, 100.0, 1000.0), 0.8
C3_LAM, C3_FACTOR = 9.0, 1.1


def _final(summary: dict, rule: str, param: float | None = None, lam: float = 0.0) -> float | None:
    for row in summary.values():
        if row["rule"] == rule and (param is None or row["param"] == param) and row["lam"] == lam:
            return row["final_mean"]
    return None


def _best(summary: dict, rule: str) -> tuple[float | None, str | None]:
    rows = [(row["final_mean"], label) for label, row in summary.items() if row["rule"] == rule]
    return min(rows) if rows else (None, None)


def claim_c1(p1: dict, decide: bool) -> Claim:
    safe = _final(p1, "sps_safe", C1_M)
    best_sgd, sgd_label = _best(p1, "sgd")
    best_max, max_label = _best(p1, "sps_max")
    threshold = None if None in (best_sgd, best_max) else min(best_sgd, C1_SPS_MAX_FACTOR * best_max)
    ok = None not in (safe, threshold) and safe <= threshold
    return Claim("C1", f"P1 (interpolated SVM): final relative sub-optimality of SPS_safe (M = {C1_M:g}) <= best SGD of the "
                       f"grid and <= {C1_SPS_MAX_FACTOR:g} x best SPS_max of the grid",
                 "competitive with adaptive baselines without tuning", safe, threshold, decided(ok, decide, safe, threshold),
                 {"sps_safe": safe, "best_sgd": best_sgd, "best_sgd_label": sgd_label, "best_sps_max": best_max,
                  "best_sps_max_label": max_label, "setting": "P1 svm_interp"})


def claim_c2(p2: dict, decide: bool) -> Claim:
    values = {M: _final(p2, "sps_safe", M) for M in C2_MS}
    present = [values[M] for M in C2_MS if values[M] is not None]
    monotone = bool(np.all(np.diff(present) <= 0))
    first, last = values[C2_MS[0]], values[C2_MS[-1]]
    ratio = None if None in (first, last) else last / first
    ok = monotone and ratio is not None and ratio <= C2_RATIO
    return Claim("C2", f"P2 (noisy SVM): SPS_safe final relative sub-optimality non-increasing in M over "
                       f"{[f'{M:g}' for M in C2_MS]} and value(M = {C2_MS[-1]:g}) <= {C2_RATIO:g} x value(M = {C2_MS[0]:g})",
                 "the safeguard controls the convergence neighborhood", ratio, C2_RATIO, decided(ok, decide, ratio),
                 {"by_M": {f"{M:g}": v for M, v in values.items()}, "monotone": monotone, "setting": "P2 svm_noisy"})


def claim_c3(p1: dict, p2: dict, decide: bool) -> Claim:
    pairs = [(P1, C1_M, p1)] + [(P2, M, p2) for M in C2_MS]
    ratios = {}
    for problem, M, summary in pairs:
        safe, ima = _final(summary, "sps_safe", M), _final(summary, "ima_sps_safe", M, C3_LAM)
        ratios[f"{problem}.M{M:g}"] = None if None in (safe, ima) else ima / safe
    known = [v for v in ratios.values() if v is not None]
    worst = max(known) if known else None
    ok = len(known) == len(ratios) and worst <= C3_FACTOR
    return Claim("C3", f"IMA-SPS_safe (lam = {C3_LAM:g}) final value <= {C3_FACTOR:g} x SPS_safe's at the same M "
                       f"(P1: M = {C1_M:g}; P2: every M of {[f'{M:g}' for M in C2_MS]})",
                 "the momentum variant has equally tight results", worst, C3_FACTOR,
                 decided(ok, decide and len(known) == len(ratios), worst), {"ratios": ratios, "setting": "P1 and P2"})


def claims(p1: dict, p2: dict, decide: bool) -> list[Claim]:
    return [claim_c1(p1, decide), claim_c2(p2, decide), claim_c3(p1, p2, decide)]
