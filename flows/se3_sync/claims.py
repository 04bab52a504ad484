"""The claim checks C1-C3 of spec se3_sync §6, from the error rows (errors.py) and the timing runs, each decided on a
95% interval against its gate (tasks/core/claims.py): C1 a bootstrap over the trials of every noise level (paired:
every method ran on the same instances), C2 per cell of its size x density grid an order-statistic interval of the
median of the per-round time ratios (methods alternated), combined by worst_part, C3 a bootstrap over the scan trials.

`decide_claims=False` (profiles too small to decide) reports the numbers, undecided.
"""
from __future__ import annotations

import math

import numpy as np

from tasks.core.claims import Claim, Gate, Verdict, bootstrap_interval, decide, on_interval, on_timings, worst_part
from tasks.core.seeding import derive_seed

from .errors import median_by

ITERATIVE = ("dqgpm", "dq_spectral")


def convergence(rows: list[dict], family: str) -> dict:
    """Per iterative method on `family`: runs, median iterations, and the runs (sigma, trial) that
    stopped at max_iter without meeting the stopping rule (a silent non-convergence is a fault)."""
    out = {}
    for method in ITERATIVE:
        mine = [r for r in rows if (r["family"], r["method"]) == (family, method)]
        if mine:
            out[method] = {"runs": len(mine), "iterations_median": float(np.median([r["iterations"] for r in mine])),
                           "not_converged": [f"sigma={r['sigma']:g} trial={r['trial']}" for r in mine
                                             if not r.get("converged", True)]}
    return out


def not_converged(details: dict) -> int:
    """How many DQGPM runs behind a claim stopped at max_iter (from its details["convergence"])."""
    return len(details["convergence"].get("dqgpm", {}).get("not_converged", []))


def trial_errors(rows: list[dict], family: str, sigma: float | None, methods: tuple[str, ...]) -> np.ndarray:
    """[trials, methods x (rot_median, trans_median)] of `family` at noise level `sigma` (None: every level), one row
    per trial (every method ran on the trial's instance), by trial number."""
    value = {(r["trial"], r["method"]): (r["rot_median"], r["trans_median"]) for r in rows
             if r["family"] == family and (sigma is None or r["sigma"] == sigma)}
    trials = sorted({trial for trial, _ in value})
    return np.array([[e for m in methods for e in value[trial, m]] for trial in trials], dtype=float)


def worst_ratio(*levels: np.ndarray) -> float:
    """C1's statistic of per-trial (DQGPM rot, DQGPM trans, EIG rot, EIG trans) errors, one array per noise level: the
    largest DQGPM / EIG ratio of median errors over the levels and the two errors."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(max(np.max(np.median(level[:, :2], axis=0) / np.median(level[:, 2:4], axis=0)) for level in levels))


def accuracy_claim(rows: list[dict], limit: float, seed: int, decide_claims: bool, setting: str) -> Claim:
    """C1: DQGPM's error <= limit x EIG's at every noise level, rotation and translation; `seed`: the bootstrap's
    base seed."""
    ratios = {}
    for key in ("rot_median", "trans_median"):
        dq, eig = median_by(rows, "geometric", "dqgpm", key), median_by(rows, "geometric", "eig", key)
        spectral = median_by(rows, "geometric", "dq_spectral", key)
        ratios[key] = {f"{s:g}": {"dqgpm": dq[s], "eig": eig[s], "ratio_vs_eig": dq[s] / eig[s] if eig[s] else None,
                                  "ratio_vs_dq_spectral": dq[s] / spectral[s] if spectral.get(s) else None}
                       for s in dq}
    worst = max(v["ratio_vs_eig"] for per_sigma in ratios.values() for v in per_sigma.values() if v["ratio_vs_eig"] is not None)
    sigmas = sorted({r["sigma"] for r in rows if r["family"] == "geometric"})
    levels = [trial_errors(rows, "geometric", s, ("dqgpm", "eig")) for s in sigmas]

    def verdict() -> Verdict:
        return on_interval(bootstrap_interval(levels, worst_ratio, derive_seed(seed, "bootstrap", "C1"),
                                              "paired trials (DQGPM and EIG on one instance), each noise level on its own"), Gate(high=limit))

    return Claim("C1", f"DQGPM median rotation and translation error <= {limit} x EIG's at every noise level",
                 "improves accuracy over matrix-based methods (no number readable)", worst, limit,
                 decide(verdict, decide_claims),
                 {"setting": setting, **ratios, "trials_per_level": [len(level) for level in levels],
                  "convergence": convergence(rows, "geometric")})


EIG_VARIANTS = ("eig", "eig_matched")
DQ_VARIANTS = ("dqgpm", "dqgpm_spectral_start")


def stronger_eig(medians: dict[str, float]) -> tuple[str, float]:
    """(label, median time) of the faster EIG variant timed: stock ARPACK tol or the matched one."""
    label = min((m for m in EIG_VARIANTS if m in medians), key=medians.__getitem__)
    return label, medians[label]


def curve_ratios(timing: list[dict]) -> list[dict]:
    """Per graph family and n (curve instances, 1 BLAS thread): median times, DQGPM / stronger EIG (on chains DQGPM
    starts from the spanning tree, and its spectral start is reported beside it), median iterations and how many
    timed DQGPM runs did not converge."""
    rows = [r for r in timing if r["purpose"] == "curve" and r["blas_threads"] == 1]
    table = []
    for family, n in sorted({(r.get("family", "er"), r["n"]) for r in rows}):
        mine = [r for r in rows if (r.get("family", "er"), r["n"]) == (family, n)]
        medians = {m: float(np.median([t for r in mine if r["method"] == m for t in r["times"]]))
                   for m in sorted({r["method"] for r in mine})}
        best, best_time = stronger_eig(medians)
        entry = {"family": family, "n": n, "edges": int(np.median([r["edges"] for r in mine])),
                 "median_s": medians, "stronger_eig": best}
        for dq in DQ_VARIANTS:
            runs = [r for r in mine if r["method"] == dq]
            if runs:
                entry[f"ratio_{dq}_over_eig"] = medians[dq] / best_time
                entry[f"{dq}_iterations_median"] = float(np.median([r["iterations"] for r in runs]))
                entry[f"{dq}_not_converged"] = sum(not r.get("converged", True) for r in runs)
        table.append(entry)
    return table


def round_ratios(rows: list[dict]) -> list[float]:
    """DQGPM's time over the faster EIG variant of the same round, for every alternated round of the instances of
    `rows` (one cell's timing rows: each instance's rows hold its rounds in order)."""
    times = {(r["instance"], r["method"]): r["times"] for r in rows}
    ratios = []
    for instance in sorted({r["instance"] for r in rows}):
        eigs = np.min([times[instance, v] for v in EIG_VARIANTS if (instance, v) in times], axis=0)
        ratios += (np.asarray(times[instance, "dqgpm"]) / eigs).tolist()
    return ratios


def claim_cells(timing: list[dict]) -> list[dict]:
    """C2's cells (n, p), worst first: the per-round ratios DQGPM / faster EIG, their median, the medians of every
    variant, DQGPM's iterations and its runs that hit max_iter."""
    rows = [r for r in timing if r["purpose"] == "claim" and r["blas_threads"] == 1]
    cells = []
    for n, p in sorted({(r["n"], r["p"]) for r in rows}):
        mine = [r for r in rows if (r["n"], r["p"]) == (n, p)]
        ratios = round_ratios(mine)
        dq = [r for r in mine if r["method"] == "dqgpm"]
        cells.append({"n": n, "p": p, "edges_median": int(np.median([r["edges"] for r in dq])),
                      "ratio_median": float(np.median(ratios)), "ratios": ratios,
                      "median_s": {m: float(np.median([t for r in mine if r["method"] == m for t in r["times"]]))
                                   for m in ("dqgpm", *EIG_VARIANTS)},
                      "dqgpm_iterations": [r["iterations"] for r in dq],
                      "dqgpm_power_iterations": [r.get("power_iterations") for r in dq],
                      "not_converged": [r["instance"] for r in dq if not r.get("converged", True)]})
    return sorted(cells, key=lambda cell: -cell["ratio_median"])


def efficiency_claim(timing: list[dict], decide_claims: bool, setting: str) -> Claim:
    """C2: DQGPM's wall time (the whole DQ pipeline) <= the faster EIG's (stock or matched ARPACK tol) in every cell
    of the grid, BLAS on one thread: per cell the median of the per-round ratios against 1 (median_interval), the
    cells combined by worst_part (the claim holds where every cell holds). DQGPM runs that hit max_iter are counted."""
    cells = claim_cells(timing)
    worst = cells[0]

    def verdict() -> Verdict:
        parts = {f"n={c['n']}, p={c['p']:g}": on_timings(c["ratios"], Gate(high=1.0), "alternated rounds (graph x repeat)")
                 for c in cells}
        return worst_part(parts)[1]

    return Claim("C2", "DQ pipeline (C build, power method, DQGPM, poses) wall time <= EIG's (the faster of stock and "
                 "matched ARPACK tolerance, round by round) in every cell of the size x density grid",
                 "faster than matrix-based methods (no number readable)", worst["ratio_median"], 1.0,
                 decide(verdict, decide_claims),
                 {"setting": setting, "worst_cell": {"n": worst["n"], "p": worst["p"]}, "cells": cells,
                  "convergence": {"dqgpm": {"runs": sum(len(c["dqgpm_iterations"]) for c in cells),
                                            "not_converged": [i for c in cells for i in c["not_converged"]]}},
                  "curve": curve_ratios(timing)})


def registration_statistic(with_chain: bool):
    """C3's statistic of per-trial (DQGPM rot, DQGPM trans, EIG rot, EIG trans[, chain rot, chain trans]) errors: the
    worse DQGPM / EIG ratio of median errors, +inf where DQGPM's median rotation error is above chaining's."""
    def statistic(trials: np.ndarray) -> float:
        medians = np.median(trials, axis=0)
        if with_chain and medians[0] > medians[4]:
            return math.inf
        return float(max(medians[0] / medians[2], medians[1] / medians[3]))

    return statistic


def registration_claim(rows: list[dict], limit: float, seed: int, decide_claims: bool, setting: str) -> Claim:
    """C3 (scans): DQGPM's errors <= limit x EIG's, and its rotation error <= chaining's; `seed`: the bootstrap's base
    seed."""
    methods = sorted({r["method"] for r in rows if r["family"] == "scans"})
    medians = {m: {k: float(np.median([r[k] for r in rows if (r["family"], r["method"]) == ("scans", m)]))
                   for k in ("rot_median", "trans_median")} for m in methods}
    rot_vs_eig = medians["dqgpm"]["rot_median"] / medians["eig"]["rot_median"]
    trans_vs_eig = medians["dqgpm"]["trans_median"] / medians["eig"]["trans_median"]
    rot_vs_chain = medians["dqgpm"]["rot_median"] / medians["chain"]["rot_median"] if "chain" in medians else None
    trials = trial_errors(rows, "scans", None, ("dqgpm", "eig", *(("chain",) if "chain" in medians else ())))

    def verdict() -> Verdict:
        return on_interval(bootstrap_interval([trials], registration_statistic("chain" in medians),
                                              derive_seed(seed, "bootstrap", "C3"),
                                              "paired scan trials, a resample where DQGPM's median rotation error is "
                                              "above chaining's counting as +inf"), Gate(high=limit))

    return Claim("C3", f"scan registration: DQGPM median rotation and translation error <= {limit} x EIG's, "
                 "rotation error <= spanning-tree chaining's",
                 "lower rotation/translation errors than matrix-based methods (no number readable)",
                 max(rot_vs_eig, trans_vs_eig), limit, decide(verdict, decide_claims),
                 {"setting": setting, "medians": medians, "rot_ratio_vs_eig": rot_vs_eig, "trans_ratio_vs_eig": trans_vs_eig,
                  "rot_ratio_vs_chain": rot_vs_chain, "trials": len(trials), "convergence": convergence(rows, "scans")})
