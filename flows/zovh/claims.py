"""zovh claim checks C1-C5 of spec §6 (thresholds fixed by the spec before any run; never tuned)."""
from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

from tasks.core.claims import Claim, decided

C1_FACTOR, C2_FACTOR = 0.5, 0.75
C3_FACTOR, C4_FACTOR, C5_FACTOR = 0.5, 1.1, 3.0
C1_BASELINES = ("s1", "s2", "scd")
C3_FUNCTIONS = ("quadratic", "levy")
PAPER = "paper: qualitative claim only"


def mean_errors(rows: list[dict]) -> dict[tuple, float]:
    """Mean Frobenius error over seeds and points per (function, regime, estimator, K)."""
    groups: dict[tuple, list[float]] = defaultdict(list)
    for row in rows:
        groups[row["function"], row["regime"], row["estimator"], int(row["K"])].append(float(row["frob_err"]))
    return {key: float(np.mean(values)) for key, values in groups.items()}


def _worst(ratios: dict[str, float | None]) -> float | None:
    known = [r for r in ratios.values() if r is not None]
    return max(known) if known and len(known) == len(ratios) else None


def _ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None:
        return None
    if b == 0 or not math.isfinite(b):
        return math.inf if a > 0 or not math.isfinite(a) else 1.0
    return a / b


def claim_c1(errors: dict, functions: list[str], K: int, decide: bool) -> Claim:
    ratios, details = {}, {}
    for fn in functions:
        zovh = errors.get((fn, "near", "zovh", K))
        best = min((errors[fn, "near", b, K], b) for b in C1_BASELINES)
        ratios[fn] = _ratio(zovh, best[0])
        details[fn] = {"zovh": zovh, "best_baseline": best[1], "best_baseline_error": best[0],
                       **{b: errors.get((fn, "near", b, K)) for b in C1_BASELINES}}
    worst = _worst(ratios)
    return Claim("C1", f"R-near, K = {K}: mean ||H_ZoVH - H||_F <= {C1_FACTOR:g} x min(S1, S2, SCD) on every function",
                 f"{PAPER} (ZoVH has the lowest error)", worst, C1_FACTOR,
                 decided(worst is not None and worst <= C1_FACTOR, decide, worst),
                 {"ratios": ratios, "errors": details, "setting": f"{', '.join(functions)}; R-near; K = {K}"})


def claim_c2(errors: dict, functions: list[str], K: int, decide: bool) -> Claim:
    ratios = {fn: _ratio(errors.get((fn, "near", "zovh_reuse", K)), errors.get((fn, "near", "zovh", K)))
              for fn in functions}
    worst = _worst(ratios)
    return Claim("C2", f"R-near, K = {K}: mean error of ZoVH-reuse <= {C2_FACTOR:g} x ZoVH's on every function",
                 f"{PAPER} (reuse improves sample efficiency at no query cost)", worst, C2_FACTOR,
                 decided(worst is not None and worst <= C2_FACTOR, decide, worst),
                 {"ratios": ratios, "setting": f"{', '.join(functions)}; R-near; K = {K}"})


def _descent_ratio(summary: dict, functions: list[str], method: str, baseline: str, field: str) -> dict:
    return {fn: _ratio(summary[fn][method][field], summary[fn][baseline][field])
            for fn in functions if fn in summary}


def claim_descent(cid: str, summary: dict, baseline: str, factor: float, decide: bool) -> Claim:
    functions = [fn for fn in C3_FUNCTIONS if fn in summary]
    ratios = _descent_ratio(summary, functions, "zovh_reuse", baseline, "best_median_ratio")
    worst = _worst(ratios) if len(functions) == len(C3_FUNCTIONS) else None
    return Claim(cid, f"median f(x_T)/f(x_0) of ZoVH-reuse at its best lr <= {factor:g} x {baseline}'s at its best lr "
                      f"(quadratic and Levy)", f"{PAPER} (faster convergence than ZO-SGD / ZoAR)",
                 worst, factor, decided(worst is not None and worst <= factor, decide, worst),
                 {"ratios": ratios, "by_function": {fn: {m: {k: summary[fn][m][k] for k in ("best_lr", "best_median_ratio",
                                                                                          "paper_lr_median_ratio")}
                                                         for m in ("zovh_reuse", baseline)} for fn in summary},
                  "paper_protocol_ratios": _descent_ratio(summary, list(summary), "zovh_reuse", baseline,
                                                          "paper_lr_median_ratio"),
                  "setting": "best lr of each method from the same grid; equal new queries per iteration (ZO-SGD K+1)"})


def claim_c5(summary: dict, decide: bool) -> Claim:
    ratios = {fn: _ratio(summary[fn]["zovh_reuse"]["wall_per_iteration_s"], summary[fn]["zoar"]["wall_per_iteration_s"])
              for fn in summary}
    plain = {fn: _ratio(summary[fn]["zovh"]["wall_per_iteration_s"], summary[fn]["zoar"]["wall_per_iteration_s"])
             for fn in summary if "zovh" in summary[fn]}
    in_runs = {fn: _ratio(summary[fn]["zovh_reuse"].get("run_wall_per_iteration_s"),
                          summary[fn]["zoar"].get("run_wall_per_iteration_s")) for fn in summary}
    worst = _worst(ratios)
    return Claim("C5", f"wall time per iteration of ZoVH-reuse <= {C5_FACTOR:g} x ZoAR's (same buffer)", PAPER, worst,
                 C5_FACTOR, decided(worst is not None and worst <= C5_FACTOR, decide, worst),
                 {"ratios": ratios, "zovh_no_reuse_ratios": plain, "ratios_in_concurrent_runs": in_runs,
                  "setting": "best of 3 back-to-back timings in one process, whole lr grid batched"})


def claims(errors: dict, functions: list[str], K: int, descent: dict, decide: bool) -> list[Claim]:
    return [claim_c1(errors, functions, K, decide), claim_c2(errors, functions, K, decide),
            claim_descent("C3", descent, "zo_sgd", C3_FACTOR, decide),
            claim_descent("C4", descent, "zoar", C4_FACTOR, decide), claim_c5(descent, decide)]
