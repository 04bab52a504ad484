"""riemannian_dueling claim checks C1-C4 of spec §6, the unjudged RDNGD-versus-RZO report (R5) and the unjudged
E3 boundary-optimum report (R6).

Each check reads the solve stage's traces (summaries.py) and puts the baselines beside the method, on the same
instances and budgets. Thresholds are the spec's, fixed before any run. Each gated statistic is decided on a 95%
bootstrap interval over seeds (tasks/core/claims.py), the exact parts (feasibility, signs) on their values; a
claim holds only if all its parts do (`jointly`).
"""
from __future__ import annotations

import numpy as np

from tasks.core.claims import (Claim, Gate, Verdict, all_hold, bootstrap_interval, decide, exact, median_of,
                               never_reached, not_run, on_interval, report_only)
from tasks.core.seeding import derive_seed

C1_N, C1_GAP, C1_CONTROL = 50, 0.05, 0.5
C2_PAIR, C2_RANGE = (50, 100), (1.3, 3.5)
C3_N, C3_GAP = 5, 5e-3
C4_SUM, C4_MIN, C4_SLOPE, C4_HORIZONS = 1e-12, -1e-15, -0.5, (10, 20, 40, 80)
METHODS = ("rdngd", "reversed", "euclidean_ngd", "rzo", "rgd")
BOOTSTRAP_SEED = 0  # fixed: the same data always get the same verdict


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


def median_on(cid: str, values, gate: Gate) -> Verdict:
    """The rule on a bootstrap interval over seeds of the median of `values`."""
    return on_interval(bootstrap_interval([values], np.median, derive_seed(BOOTSTRAP_SEED, "bootstrap", cid), "seeds"), gate)


def claim_c1(rayleigh: dict, deciding: bool) -> Claim:
    """rayleigh: n -> method -> {"gap_at_claim": [per seed], ...}."""
    n = _size(rayleigh, C1_N)
    cell = rayleigh[n]
    gaps, control_gaps = cell["rdngd"]["gap_at_claim"], cell["reversed"]["gap_at_claim"]
    if n == C1_N:
        verdict = decide(lambda: all_hold({"RDNGD": median_on("C1", gaps, Gate(high=C1_GAP)),
                                          "reversed control": median_on("C1.control", control_gaps,
                                                                        Gate(low=C1_CONTROL))}), deciding)
    else:
        verdict = not_run(f"the profile lacks n = {C1_N} (ran {sorted(rayleigh)})")
    return Claim("C1", f"E1 Rayleigh n = {C1_N}: median relative gap of RDNGD after 40 n comparisons <= {C1_GAP:g}, "
                       f"reversed-sign control >= {C1_CONTROL:g}", "not accessible (prototype 0.001-0.02)",
                 median_of(gaps), C1_GAP, verdict,
                 {"setting": f"E1 sphere S^{n - 1}, exact comparisons", "reversed_control": median_of(control_gaps),
                  "by_method": {m: median_of(cell.get(m, {}).get("gap_at_claim", [])) for m in METHODS},
                  "per_seed": {m: cell.get(m, {}).get("gap_at_claim") for m in METHODS},
                  "rdngd_theory_schedule": median_of(cell.get("rdngd_theory", {}).get("gap_at_claim", [])),
                  "note": "euclidean_ngd and reversed at the same comparisons; rzo at the same function evaluations "
                          "(2 per comparison); rgd is pymanopt's first-order reference after its iterations"})


def ratio_of_medians(numerator, denominator) -> float:
    """median B over median B: inf when only the numerator's target is never reached, nan when both are."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.median(numerator) / np.median(denominator))


def scaling_verdict(hits: dict) -> Verdict:
    """C2 on a bootstrap interval of B(large)/B(small), each size's seeds (different instances) resampled on its own;
    a median B never reached (over half the seeds miss the gap within the budget) fails: B must be measured."""
    small, large = C2_PAIR
    unreached = [f"n = {n}" for n in C2_PAIR if not np.isfinite(np.median(hits[n]))]
    if unreached:
        return never_reached(f"median B beyond the budget (80 n) at {' and '.join(unreached)}")
    interval = bootstrap_interval([hits[large], hits[small]], ratio_of_medians,
                                  derive_seed(BOOTSTRAP_SEED, "bootstrap", "C2"), "seeds")
    return on_interval(interval, Gate(*C2_RANGE))


def claim_c2(rayleigh: dict, deciding: bool) -> Claim:
    dims = sorted(rayleigh)
    B = {n: median_of(rayleigh[n]["rdngd"]["hit"]) for n in dims}
    B_ngd = {n: median_of(rayleigh[n]["euclidean_ngd"]["hit"]) for n in dims}
    small, large = C2_PAIR
    exponent = loglog_slope(dims, [B[n] for n in dims]) if len(dims) >= 3 else None
    if set(C2_PAIR) <= set(dims):
        hits = {n: rayleigh[n]["rdngd"]["hit"] for n in C2_PAIR}
        ours, verdict = finite(ratio_of_medians(hits[large], hits[small])), decide(lambda: scaling_verdict(hits), deciding)
    else:
        hits, ours, verdict = {}, None, not_run(f"the profile lacks n = {small} and {large} (ran {dims})")
    return Claim("C2", f"E1: comparisons B(n) to a relative gap of 0.05 scale about linearly: "
                       f"{C2_RANGE[0]:g} <= B({large})/B({small}) <= {C2_RANGE[1]:g}", "O(d / eps^2)",
                 ours, C2_RANGE[1], verdict,
                 {"setting": "E1 sphere, eta_t = 0.3/sqrt(t+1)", "range": list(C2_RANGE),
                  "B": {str(n): finite(v) for n, v in B.items()}, "exponent": exponent,
                  "B_per_seed": {str(n): [finite(float(v)) for v in h] for n, h in hits.items()},
                  "euclidean_ngd_B": {str(n): finite(v) for n, v in B_ngd.items()},
                  "euclidean_ngd_exponent": loglog_slope(dims, [B_ngd[n] for n in dims]) if len(dims) >= 3 else None,
                  "not_reached_counts_as": "infinity (budget 80 n); null in B_per_seed"})


def claim_c3(karcher: dict, deciding: bool) -> Claim:
    """karcher: n -> method -> {"rel_gap": [per seed], "min_eig": [per seed], "increase": [per seed]}."""
    n = _size(karcher, C3_N)
    cell = karcher[n]
    gaps = cell["rdngd"]["rel_gap"]
    min_eig = min(cell["rdngd"]["min_eig"])
    control_up = [v > 0 for v in cell["reversed"]["increase"]]
    if n == C3_N:
        verdict = decide(lambda: all_hold({
            "RDNGD": median_on("C3", gaps, Gate(high=C3_GAP)),
            "SPD": exact(min_eig > 0, f"smallest eigenvalue over every traced iterate and seed {min_eig:.3g} > 0"),
            "reversed control": exact(bool(control_up) and all(control_up),
                                      f"f increased on {sum(control_up)} of {len(control_up)} seeds")}), deciding)
    else:
        verdict = not_run(f"the profile lacks n = {C3_N} (ran {sorted(karcher)})")
    return Claim("C3", f"E2 Karcher mean n = {C3_N}: relative objective gap to the fixed-point reference <= {C3_GAP:g}, "
                       "every iterate SPD, reversed-sign control increases the objective",
                 "not accessible ([3P] 6.7e-6)", median_of(gaps), C3_GAP, verdict,
                 {"setting": f"E2 SPD({n}), affine-invariant metric", "min_eigenvalue_over_iterates": min_eig,
                  "rel_gap_per_seed": list(gaps), "reversed_increase": cell["reversed"]["increase"],
                  "by_method": {m: median_of(cell[m]["rel_gap"]) for m in METHODS},
                  "other_sizes": {str(size): {m: median_of(c[m]["rel_gap"]) for m in METHODS}
                                  for size, c in karcher.items() if size != n}})


def rate_slope(horizons, rows: np.ndarray) -> float:
    """Log-log slope of the median (over the rows: seeds) sub-optimality against the horizon; nan when undefined."""
    slope = loglog_slope(horizons, np.median(rows, axis=0))
    return np.nan if slope is None else slope


def claim_c4(simplex: dict, deciding: bool) -> Claim:
    """simplex: {"horizons": [...], "subopt": {T: [per seed]}, "projections": int, "max_sum_error", "min_x"}."""
    ran = set(C4_HORIZONS) <= set(simplex["horizons"])
    horizons = list(C4_HORIZONS) if ran else simplex["horizons"]
    # one run per seed to the largest horizon, the shorter ones its prefix: a seed's row is resampled whole
    rows = np.column_stack([simplex["subopt"][T] for T in horizons])
    feasible = simplex["max_sum_error"] < C4_SUM and simplex["min_x"] >= C4_MIN
    if ran:
        verdict = decide(lambda: all_hold({
            "rate": on_interval(bootstrap_interval([rows], lambda r: rate_slope(horizons, r),
                                                   derive_seed(BOOTSTRAP_SEED, "bootstrap", "C4"), "seeds"),
                                Gate(high=C4_SLOPE)),
            "feasibility": exact(simplex["projections"] == 0 and feasible,
                                 f"{simplex['projections']} projections, max |sum x - 1| {simplex['max_sum_error']:.3g}, "
                                 f"min x {simplex['min_x']:.3g} over every iterate")}), deciding)
    else:
        verdict = not_run(f"the profile lacks the horizons {list(C4_HORIZONS)} (ran {simplex['horizons']})")
    medians = [median_of(simplex["subopt"][T]) for T in simplex["horizons"]]
    return Claim("C4", f"E3 RDFW on the simplex: zero projections, |sum x - 1| < {C4_SUM:g} and min x >= {C4_MIN:g} at "
                       f"every iterate, log-log slope of median sub-optimality vs horizon <= {C4_SLOPE:g}",
                 "O(1/k)-type rate", finite(rate_slope(horizons, rows)), C4_SLOPE, verdict,
                 {"setting": "E3 simplex, [3P] batch and probe schedules", "projections": simplex["projections"],
                  "max_sum_error": simplex["max_sum_error"], "min_x": simplex["min_x"],
                  "median_subopt": dict(zip(map(str, simplex["horizons"]), medians)),
                  "subopt_per_seed": {str(T): list(simplex["subopt"][T]) for T in horizons},
                  "comparisons": simplex["comparisons"], "lmo_calls": simplex["lmo_calls"]})


def report_r5(rayleigh: dict) -> Claim:
    """RDNGD against RZO at equal function evaluations (a comparison counts 2), no gate: RZO reads values."""
    n = _size(rayleigh, C1_N)
    cell = rayleigh[n]
    ours, rzo = median_of(cell["rdngd"]["gap_at_budget"]), median_of(cell["rzo"]["gap_at_budget"])
    return Claim("R5", f"E1 n = {n}: RDNGD versus RZO at equal function evaluations (report, no gate)",
                 "RZO expected to win: it sees values", ours, None, report_only(),
                 {"setting": f"E1 sphere n = {n}, 2 evaluations per comparison", "rdngd": ours, "rzo": rzo,
                  "ratio_rdngd_over_rzo": ours / rzo if ours is not None and rzo else None})


def report_r6(boundary: dict) -> Claim:
    """E3 with a boundary optimum (target 2c - 1/n outside the simplex): the spec gives no claim for it, so C4's
    statistics are reported beside C4 without a gate (decided before any run)."""
    horizons = boundary["horizons"]
    rows = np.column_stack([boundary["subopt"][T] for T in horizons])
    return Claim("R6", "E3 RDFW with a boundary optimum: log-log slope of median sub-optimality vs horizon, "
                       "projections and feasibility (report, no gate)", "not stated", finite(rate_slope(horizons, rows)),
                 None, report_only(),
                 {"setting": "E3 simplex, target 2c - 1/n (optimum on a face), same starts and directions as C4",
                  "projections": boundary["projections"], "max_sum_error": boundary["max_sum_error"],
                  "min_x": boundary["min_x"],
                  "median_subopt": {str(T): median_of(boundary["subopt"][T]) for T in horizons},
                  "subopt_per_seed": {str(T): list(boundary["subopt"][T]) for T in horizons}})


def report_r7(n: int, cell: dict) -> Claim:
    """RRDNGD on E2 (the strongly convex case of the O(d log 1/eps) result): the spec gives no gate, so the per-phase
    squared distance to the reference, its bound D_k = D_0 / 2^k and the log2 slope of its median against the phase
    are reported (the [3P] reproduction saw about -1: halving per phase), beside RDNGD at its own E2 budget."""
    phases = cell["rrdngd_phases"]
    medians = [float(np.median(row)) for row in phases["dist2"]]
    slope = loglog_slope(np.exp2(np.arange(len(medians))), medians) if len(medians) >= 2 else None
    return Claim("R7", f"E2 Karcher mean n = {n}: RRDNGD squared distance to the reference per phase of "
                       f"{phases['phase_length']:,} comparisons, log2 slope against the phase (report, no gate)",
                 "O(d log 1/eps) ([3P]: slope about -1)", slope, None, report_only(),
                 {"setting": f"E2 SPD({n}), alpha = 1, D_0 = d(I, X_ref)^2 = {phases['start_dist2']:.4g}, convex [3P] "
                             "schedule per phase with eps_k = D_k / 4, last iterate of each phase",
                  "median_dist2_per_phase": medians, "bound_per_phase": phases["bound"],
                  "median_rel_gap_per_phase": [float(np.median(row)) for row in phases["rel_gap"]],
                  "dist2_per_seed": phases["dist2"],
                  "comparisons_per_phase": phases["phase_length"],
                  "rdngd_rel_gap_at_its_budget": median_of(cell["rdngd"]["rel_gap"])})


def claims(rayleigh: dict, karcher: dict, simplex: dict, deciding: bool) -> list[Claim]:
    """C1-C4 and R5, then R6 where the simplex record holds the boundary-optimum runs and R7 for each E2 size that
    ran RRDNGD."""
    found = [claim_c1(rayleigh, deciding), claim_c2(rayleigh, deciding), claim_c3(karcher, deciding),
             claim_c4(simplex, deciding), report_r5(rayleigh)]
    found += [report_r6(simplex["boundary"])] if "boundary" in simplex else []
    return found + [report_r7(n, cell) for n, cell in karcher.items() if "rrdngd_phases" in cell][:1]
