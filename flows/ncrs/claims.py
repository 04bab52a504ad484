"""ncrs claim checks C1-C3 of spec §6 and the unjudged k-scaling report R4, with the baselines beside them.

cells: (method, d, p) -> {"hit": [per evaluation instance], "best_grad": [...], "step": float}; N is the median of
"hit" (inf when fewer than half the instances reached epsilon). Thresholds are the spec's, fixed before any run.
Each gated claim is decided on a 95% bootstrap interval over the evaluation instances (tasks/core/claims.py); a
never-reached instance enters the bootstrap as N = inf, and a median N never reached fails its claim.
"""
from __future__ import annotations

import math

import numpy as np

from tasks.core.claims import (Claim, Gate, Verdict, bootstrap_interval, decide, never_reached, not_run, on_interval,
                               report_only)
from tasks.core.seeding import derive_seed

C1_P, C1_DIMS, C1_RANGE = 0.4, (20, 200), (0.67, 1.5)
C2_MARGINS, C2_DIM, C2_RATIO = (0.1, 0.4), 200, 3.0
C3_RATIO = 0.6
BASELINES = ("ngd", "exact", "cma_es", "one_plus_one")
BOOTSTRAP_SEED = 0  # fixed: the same data always get the same verdict


def median_n(cell: dict | None) -> float | None:
    return None if cell is None else float(np.median(cell["hit"]))


def ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b is not None and math.isfinite(a) and math.isfinite(b) and b > 0 else None


def slope(dims: list[int], values: list[float | None]) -> float | None:
    """Least-squares slope of log N against log d over the finite points (at least two)."""
    points = [(d, v) for d, v in zip(dims, values) if v is not None and math.isfinite(v) and v > 0]
    if len(points) < 2:
        return None
    x, y = np.log([p[0] for p in points]), np.log([p[1] for p in points])
    return float(np.polyfit(x, y, 1)[0])


def _finite(value: float | None) -> float | None:
    """A number for claims.json: None for a missing or non-finite one (a step nevergrad adapts itself, N never reached)."""
    return None if value is None or not math.isfinite(value) else float(value)


def per_instance(hits) -> list[float | None]:
    """N per instance for claims.json: null where the instance never reached epsilon."""
    return [_finite(float(v)) for v in hits]


def ratio_of_medians(numerator: np.ndarray, denominator: np.ndarray) -> float:
    """median N over median N: inf when only the numerator's is never reached, nan when both are."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.median(numerator) / np.median(denominator))


def median_ratio_verdict(cid: str, numerator, denominator, paired: bool, gate: Gate, where: tuple[str, str]) -> Verdict:
    """The rule on a bootstrap interval of ratio_of_medians over instances: paired (rows resampled together) when
    both sides ran on the same instances, else each side resampled on its own. A median N never reached (over half
    the instances beyond the budget) fails: the claim needs N measured on both sides (`where` names them)."""
    unreached = [name for name, hits in zip(where, (numerator, denominator)) if not np.isfinite(np.median(hits))]
    if unreached:
        return never_reached(f"median N beyond the budget at {' and '.join(unreached)}")
    seed = derive_seed(BOOTSTRAP_SEED, "bootstrap", cid)
    if paired:
        rows = np.column_stack([numerator, denominator])
        interval = bootstrap_interval([rows], lambda r: ratio_of_medians(r[:, 0], r[:, 1]), seed, "instances")
    else:
        interval = bootstrap_interval([numerator, denominator], ratio_of_medians, seed, "instances")
    return on_interval(interval, gate)


def claim_c1(cells: dict, dims: list[int], deciding: bool) -> Claim:
    low, high = (C1_DIMS if all(d in dims for d in C1_DIMS) else (min(dims), max(dims)))
    by_method = {}
    for method in ("ncrs",) + BASELINES:
        N = {d: median_n(cells.get((method, d, C1_P))) for d in dims}
        by_method[method] = {"N": {str(d): _finite(v) for d, v in N.items()}, "ratio": ratio(N[high], N[low]),
                             "slope_log_N_vs_log_d": slope(dims, [N[d] for d in dims])}
    hits = {d: cells[("ncrs", d, C1_P)]["hit"] for d in (low, high)}
    ours = _finite(ratio_of_medians(hits[high], hits[low]))
    # instance i starts from the same z0 at every d (A and w differ): pairs resampled together
    if (low, high) == C1_DIMS:
        verdict = decide(lambda: median_ratio_verdict("C1", hits[high], hits[low], True, Gate(*C1_RANGE),
                                                      (f"d = {high}", f"d = {low}")), deciding)
    else:
        verdict = not_run(f"the profile lacks d = {C1_DIMS[0]} and {C1_DIMS[1]} (ran {dims})")
    return Claim("C1", f"N({high})/N({low}) of NCRS at p = {C1_P:g} in [{C1_RANGE[0]:g}, {C1_RANGE[1]:g}] "
                       "(intrinsic, not ambient, dimension)", "O(k / (p^2 eps^2)), independent of d", ours,
                 C1_RANGE[1], verdict,
                 {"setting": f"uniform margin p = {C1_P:g}, d in {dims}, instance i from the same z0 at every d",
                  "range": list(C1_RANGE),
                  "N_per_instance": {str(d): per_instance(h) for d, h in hits.items()},
                  "slope_log_N_vs_log_d": by_method["ncrs"]["slope_log_N_vs_log_d"], "by_method": by_method,
                  "steps": {m: {str(d): _finite(cells[(m, d, C1_P)].get("step")) for d in dims if (m, d, C1_P) in cells}
                            for m in ("ncrs",) + BASELINES}})


def claim_c2(cells: dict, dims: list[int], margins: list[float], deciding: bool) -> Claim:
    d = C2_DIM if C2_DIM in dims else max(dims)
    small, large = C2_MARGINS
    by_method = {m: {"N_p_small": median_n(cells.get((m, d, small))), "N_p_large": median_n(cells.get((m, d, large)))}
                 for m in ("ncrs", "ngd")}
    for row in by_method.values():
        row["ratio"] = ratio(row["N_p_small"], row["N_p_large"])
        row["N_p_small"], row["N_p_large"] = _finite(row["N_p_small"]), _finite(row["N_p_large"])
    ran = d == C2_DIM and set(C2_MARGINS) <= set(margins)
    hits = {p: cells[("ncrs", d, p)]["hit"] for p in C2_MARGINS} if ran else {}
    ours = _finite(ratio_of_medians(hits[small], hits[large])) if ran else by_method["ncrs"]["ratio"]
    # both margins ran on the same evaluation instances of d: pairs resampled together
    if ran:
        verdict = decide(lambda: median_ratio_verdict("C2", hits[small], hits[large], True, Gate(low=C2_RATIO),
                                                      (f"p = {small:g}", f"p = {large:g}")), deciding)
    else:
        verdict = not_run(f"the profile lacks d = {C2_DIM} or p in {list(C2_MARGINS)} (ran d = {dims}, p = {margins})")
    return Claim("C2", f"N(p = {small:g})/N(p = {large:g}) of NCRS at d = {d} >= {C2_RATIO:g}", "p^-2: 16 at the theory step",
                 ours, C2_RATIO, verdict,
                 {"setting": f"uniform margin, d = {d}, each p at its calibrated step", "by_method": by_method,
                  "N_per_instance": {f"p = {p:g}": per_instance(h) for p, h in hits.items()}})


def worst_wrong_ratio(rows: np.ndarray) -> float:
    """rows: per instance, oracle after oracle, the (one answer, majority vote) wrong-decision probabilities averaged
    over the same pairs; the largest over oracles of the mean majority's over the mean one answer's."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.max(rows[:, 1::2].mean(axis=0) / rows[:, 0::2].mean(axis=0)))


def _on_pairs(run: dict) -> dict:
    """The wrong-decision rates of one answer and of the majority on the pairs one run queried, and their ratio."""
    one, votes = float(np.mean(run["pair_wrong_one"])), float(np.mean(run["pair_wrong_votes"]))
    return {"wrong_one_answer": one, "wrong_majority": votes, "ratio": votes / one if one > 0 else None,
            "wrong_one_answer_per_instance": [float(v) for v in run["pair_wrong_one"]],
            "wrong_majority_per_instance": [float(v) for v in run["pair_wrong_votes"]]}


def claim_c3(voting: dict, votes: int, deciding: bool) -> Claim:
    """voting: oracle -> {"single": run, "voting": run}. Each run holds, per instance, the exact probabilities that
    one answer and that a majority of `votes` answers decide wrongly, averaged over the pairs (x_t, candidate) that
    run queried (so both rates stand on identical pairs), the fraction of its own decisions that were wrong,
    best_grad and hit. The gate reads the voting run's pairs; the single-vote run's pairs are reported beside."""
    by_oracle = {}
    for oracle, runs in voting.items():
        by_oracle[oracle] = {"on_voting_run_pairs": _on_pairs(runs["voting"]),
                             "on_single_vote_run_pairs": _on_pairs(runs["single"]),
                             "own_decisions_wrong_single_run": float(np.mean(runs["single"]["wrong_fraction"])),
                             "own_decisions_wrong_voting_run": float(np.mean(runs["voting"]["wrong_fraction"])),
                             "median_best_grad_single": float(np.median(runs["single"]["best_grad"])),
                             "median_best_grad_voting": float(np.median(runs["voting"]["best_grad"])),
                             "reached_single": int(np.isfinite(runs["single"]["hit"]).sum()),
                             "reached_voting": int(np.isfinite(runs["voting"]["hit"]).sum()),
                             "instances": len(runs["single"]["hit"])}
    # both rates of a row come from the same pairs, and every oracle ran on the same instances: one row per instance,
    # resampled together (a paired bootstrap)
    rows = np.column_stack([runs["voting"][key] for runs in voting.values() for key in ("pair_wrong_one", "pair_wrong_votes")])
    ours = _finite(worst_wrong_ratio(rows))
    verdict = decide(lambda: on_interval(bootstrap_interval([rows], worst_wrong_ratio,
                                                            derive_seed(BOOTSTRAP_SEED, "bootstrap", "C3"), "instances"),
                                         Gate(high=C3_RATIO)), deciding)
    return Claim("C3", f"wrong accept/reject decisions with {votes} votes <= {C3_RATIO:g} x one vote on the same pairs, "
                       "under every gap-dependent oracle (worst ratio)", "O(k^2 / eps^4) with voting (no empirical number)",
                 ours, C3_RATIO, verdict,
                 {"setting": f"gap-dependent oracles {list(voting)}, the pairs queried by the {votes}-vote runs",
                  "by_oracle": by_oracle})


def report_r4(k_cells: dict) -> Claim:
    """k_cells: k -> run; N(k_max)/N(k_min), no gate (theory about k_max / k_min)."""
    ks = sorted(k_cells)
    N = {k: median_n(k_cells[k]) for k in ks}
    ours = ratio(N[ks[-1]], N[ks[0]])
    return Claim("R4", f"k-scaling N(k = {ks[-1]})/N(k = {ks[0]}) (report, no gate)", f"about {ks[-1] / ks[0]:g}", ours,
                 None, report_only(), {"setting": "uniform margin, z0 of fixed norm", "N": {str(k): _finite(v) for k, v in N.items()},
                              "steps": {str(k): k_cells[k]["step"] for k in ks}})


def claims(cells: dict, dims: list[int], margins: list[float], voting: dict, votes: int, k_cells: dict,
           deciding: bool) -> list[Claim]:
    return [claim_c1(cells, dims, deciding), claim_c2(cells, dims, margins, deciding), claim_c3(voting, votes, deciding),
            report_r4(k_cells)]
