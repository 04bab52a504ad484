"""riemannian_dueling claim checks C1-C4 of spec §6 and the unjudged RDNGD-versus-RZO report (R5).

Each check reads the solve stage's traces (summaries.py) and puts the baselines beside the method, on the same
instances and budgets. Thresholds are the spec's, fixed before any run.
"""
from __future__ import annotations

import numpy as np

from tasks.core.claims import Claim, decided, median_of, report_only

C1_N, C1_GAP, C1_CONTROL = 50, 0.05, 0.5
C2_PAIR, C2_RANGE = (50, 100), (1.3, 3.5)
C3_N, C3_GAP = 5, 5e-3
C4_SUM, C4_MIN, C4_SLOPE, C4_HORIZONS = 1e-12, -1e-15, -0.5, (10, 20, 40, 80)
METHODS = ("rdngd", "reversed", "euclidean_ngd", "rzo", "rgd")


def finite(value: float | None) -> float | None:
    """A number for claims.json: None for a missing or non-finite one (never reached counts as infinite)."""
    return value if value is not None and np.isfinite(value) else None


def loglog_slope(x, y) -> float | None:
    """Least-squares slope of log y against log x; None with fewer than two finite positive points."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    keep = np.isfinite(y) & (y > 0)
    return float(np.polyfit(np.log(x[keep]), np.log(y[keep]), 1)[0]) if keep.sum() >= 2 else None


def _size(cells: dict, wanted: int) -> int:
    """The spec's size when the profile ran it, else the nearest one run (its claim then stays undecided)."""
    return wanted if wanted in cells else min(cells, key=lambda n: abs(n - wanted))


def claim_c1(rayleigh: dict, decide: bool) -> Claim:
    """rayleigh: n -> method -> {"gap_at_claim": [per seed], ...}."""
    n = _size(rayleigh, C1_N)
    cell = rayleigh[n]
    ours = median_of(cell.get("rdngd", {}).get("gap_at_claim", []))
    control = median_of(cell.get("reversed", {}).get("gap_at_claim", []))
    ok = ours is not None and control is not None and ours <= C1_GAP and control >= C1_CONTROL
    return Claim("C1", f"E1 Rayleigh n = {C1_N}: median relative gap of RDNGD after 40 n comparisons <= {C1_GAP:g}, "
                       f"reversed-sign control >= {C1_CONTROL:g}", "not accessible (prototype 0.001-0.02)", ours, C1_GAP,
                 decided(ok, decide and n == C1_N, ours, control),
                 {"setting": f"E1 sphere S^{n - 1}, exact comparisons", "reversed_control": control,
                  "by_method": {m: median_of(cell.get(m, {}).get("gap_at_claim", [])) for m in METHODS},
                  "per_seed": {m: cell.get(m, {}).get("gap_at_claim") for m in METHODS},
                  "note": "euclidean_ngd and reversed at the same comparisons; rzo at the same function evaluations "
                          "(2 per comparison); rgd is pymanopt's first-order reference after its iterations"})


def claim_c2(rayleigh: dict, decide: bool) -> Claim:
    dims = sorted(rayleigh)
    B = {n: median_of(rayleigh[n]["rdngd"]["hit"]) for n in dims}
    B_ngd = {n: median_of(rayleigh[n]["euclidean_ngd"]["hit"]) for n in dims}
    small, large = C2_PAIR
    ratio = B[large] / B[small] if B.get(small) and B.get(large) and np.isfinite(B[large] / B[small]) else None
    exponent = loglog_slope(dims, [B[n] for n in dims]) if len(dims) >= 3 else None
    ok = ratio is not None and C2_RANGE[0] <= ratio <= C2_RANGE[1]
    return Claim("C2", f"E1: comparisons B(n) to a relative gap of 0.05 scale about linearly: "
                       f"{C2_RANGE[0]:g} <= B({large})/B({small}) <= {C2_RANGE[1]:g}", "O(d / eps^2)", ratio,
                 C2_RANGE[1], decided(ok, decide, ratio),
                 {"setting": "E1 sphere, eta_t = 0.3/sqrt(t+1)", "range": list(C2_RANGE),
                  "B": {str(n): finite(v) for n, v in B.items()}, "exponent": exponent,
                  "euclidean_ngd_B": {str(n): finite(v) for n, v in B_ngd.items()},
                  "euclidean_ngd_exponent": loglog_slope(dims, [B_ngd[n] for n in dims]) if len(dims) >= 3 else None,
                  "not_reached_counts_as": "infinity (budget 80 n)"})


def claim_c3(karcher: dict, decide: bool) -> Claim:
    """karcher: n -> method -> {"rel_gap": [per seed], "min_eig": [per seed], "increase": [per seed]}."""
    n = _size(karcher, C3_N)
    cell = karcher[n]
    ours = median_of(cell["rdngd"]["rel_gap"])
    min_eig = min(cell["rdngd"]["min_eig"])
    control_up = [v > 0 for v in cell["reversed"]["increase"]]
    ok = ours is not None and ours <= C3_GAP and min_eig > 0 and bool(control_up) and all(control_up)
    return Claim("C3", f"E2 Karcher mean n = {C3_N}: relative objective gap to the fixed-point reference <= {C3_GAP:g}, "
                       "every iterate SPD, reversed-sign control increases the objective",
                 "not accessible ([3P] 6.7e-6)", ours, C3_GAP, decided(ok, decide and n == C3_N, ours),
                 {"setting": f"E2 SPD({n}), affine-invariant metric", "min_eigenvalue_over_iterates": min_eig,
                  "reversed_increase": cell["reversed"]["increase"],
                  "by_method": {m: median_of(cell[m]["rel_gap"]) for m in METHODS},
                  "other_sizes": {str(size): {m: median_of(c[m]["rel_gap"]) for m in METHODS}
                                  for size, c in karcher.items() if size != n}})


def claim_c4(simplex: dict, decide: bool) -> Claim:
    """simplex: {"horizons": [...], "subopt": {T: [per seed]}, "projections": int, "max_sum_error", "min_x"}."""
    horizons = simplex["horizons"]
    medians = [median_of(simplex["subopt"][T]) for T in horizons]
    slope = loglog_slope(horizons, medians)
    feasible = simplex["max_sum_error"] < C4_SUM and simplex["min_x"] >= C4_MIN
    ok = simplex["projections"] == 0 and feasible and slope is not None and slope <= C4_SLOPE
    return Claim("C4", f"E3 RDFW on the simplex: zero projections, |sum x - 1| < {C4_SUM:g} and min x >= {C4_MIN:g} at "
                       f"every iterate, log-log slope of median sub-optimality vs horizon <= {C4_SLOPE:g}",
                 "O(1/k)-type rate", slope, C4_SLOPE, decided(ok, decide and tuple(horizons) == C4_HORIZONS, slope),
                 {"setting": "E3 simplex, [3P] batch and probe schedules", "projections": simplex["projections"],
                  "max_sum_error": simplex["max_sum_error"], "min_x": simplex["min_x"],
                  "median_subopt": dict(zip(map(str, horizons), medians)), "comparisons": simplex["comparisons"],
                  "lmo_calls": simplex["lmo_calls"]})


def report_r5(rayleigh: dict) -> Claim:
    """RDNGD against RZO at equal function evaluations (a comparison counts 2), no gate: RZO reads values."""
    n = _size(rayleigh, C1_N)
    cell = rayleigh[n]
    ours, rzo = median_of(cell["rdngd"]["gap_at_budget"]), median_of(cell["rzo"]["gap_at_budget"])
    return Claim("R5", f"E1 n = {n}: RDNGD versus RZO at equal function evaluations (report, no gate)",
                 "RZO expected to win: it sees values", ours, None, report_only(),
                 {"setting": f"E1 sphere n = {n}, 2 evaluations per comparison", "rdngd": ours, "rzo": rzo,
                  "ratio_rdngd_over_rzo": ours / rzo if ours is not None and rzo else None})


def claims(rayleigh: dict, karcher: dict, simplex: dict, decide: bool) -> list[Claim]:
    return [claim_c1(rayleigh, decide), claim_c2(rayleigh, decide), claim_c3(karcher, decide),
            claim_c4(simplex, decide), report_r5(rayleigh)]
