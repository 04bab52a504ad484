"""The claim checks C1-C3 of spec mip_early_stop §6 for one family, each decided on a 95% bootstrap over the family's
instances (tasks/core/claims.py): C1 over its calibration and test instances (their conformal scores), C2 and C3 over
its test instances, paired (every rule was replayed on the same instances).

A claim that also states a side condition (C1: the fixed split's coverage; C3: both rules' coverage) counts a resample
where the side condition fails as a value on the failing side of its gate (an infinity), so the one interval decides
both: pass when both hold in at least 97.5% of the resamples, fail when the main statistic (or the side condition) is
wholly on the wrong side.
"""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from tasks.core.claims import Claim, Gate, Interval, bootstrap_interval, decide, on_interval
from tasks.core.seeding import derive_seed
from tasks.mip.conformal import conformal_threshold, quantile_index


def _finite(value: float) -> float | str:
    return value if math.isfinite(value) else str(value)


def thresholds(cal: np.ndarray, alpha: float, quantile: str) -> np.ndarray:
    """conformal_threshold of every row of `cal` (one calibration set of scores per row) at once: C1's bootstrap
    recalibrates hundreds of splits per resample."""
    if quantile == "numpy":
        return np.quantile(cal, alpha, axis=1)
    j = quantile_index(cal.shape[1], alpha)
    return np.full(len(cal), -math.inf) if j == 0 else np.sort(cal, axis=1)[:, j - 1]


def coverage_statistic(alpha: float, quantile: str, splits: int, seed: int, min_fixed: float) -> Callable:
    """C1's statistic of (calibration scores, test scores): the mean coverage over `splits` random halvings of the
    pooled instances (calibrated on one half, covering the other), or -inf where the fixed split (tau from the
    calibration scores) covers less than `min_fixed` of the test instances. An instance is covered exactly when its
    score is >= tau (tasks/mip/conformal.score), so a resample is recalibrated without replaying a solve; `seed` draws
    the halvings as the replay's coverage_over_splits does, so on the instances as drawn this is the replay's mean."""
    def statistic(cal: np.ndarray, test: np.ndarray) -> float:
        if np.mean(test >= conformal_threshold(cal, alpha, quantile)) < min_fixed:
            return -math.inf
        pooled = np.concatenate([cal, test])
        rng = np.random.default_rng(seed)  # the same halvings in every resample: only the instances vary
        halves = pooled[np.array([rng.permutation(len(pooled)) for _ in range(splits)])]
        n_cal = len(pooled) // 2
        tau = thresholds(halves[:, :n_cal], alpha, quantile)
        return float(np.mean(halves[:, n_cal:] >= tau[:, None]))

    return statistic


def per_test_instance(rows: list[dict], *columns: tuple[str, str]) -> np.ndarray:
    """[instances, columns]: per test instance (sorted by name), the value `key` of each (rule, key)."""
    value = {(r["instance"], r["rule"], key): float(r[key]) for r in rows for key in ("time", "covered")}
    instances = sorted({r["instance"] for r in rows})
    return np.array([[value[i, rule, key] for rule, key in columns] for i in instances])


def ratio_of_means(pairs: np.ndarray) -> float:
    return float(pairs[:, 0].mean() / pairs[:, 1].mean())


def faster_with_coverage(min_coverage: float) -> Callable:
    """C3's statistic of per-instance (network time, gap-rule time, network covered, gap rule covered): the ratio of
    mean times, +inf where either rule covers less than `min_coverage` of the instances."""
    def statistic(rows: np.ndarray) -> float:
        covered = rows[:, 2:].mean(axis=0)
        return ratio_of_means(rows[:, :2]) if covered.min() >= min_coverage else math.inf

    return statistic


def family_claims(family: str, outcome: dict, online: list[dict], *, alpha: float, quantile: str, coverage_splits: int,
                  speed_ratio: float, min_coverage_mean: float, min_coverage_fixed: float, seed: int,
                  decide_claims: bool, unproved: dict[str, int]) -> list[Claim]:
    """Claims 1-3 of spec §6 for one family (undecided where the profile is not sized to decide). `outcome`: the
    replay's summary, rows and conformal scores (replay.evaluate_family); `seed`: the bootstraps' base seed;
    `unproved`: per split, the solves left out because SCIP did not prove them (shown in every claim's details)."""
    s, rows, scores = outcome["summary"], outcome["rows"], outcome["scores"]
    agreement = float(np.mean([o["agree"] for o in online])) if online else None
    online_time = (float(np.mean([o["online_time_s"] for o in online]) / np.mean([o["replay_time_s"] for o in online]))
                   if online else None)
    stop_times = float(np.mean([o["stop_time_agrees"] for o in online])) if online else None
    left_out = {"unproved_left_out": dict(unproved)}

    def interval(claim: str, groups, statistic, what: str) -> Interval:
        return bootstrap_interval(groups, statistic, derive_seed(seed, "bootstrap", f"{claim}-{family}"), what)

    fixed = s["network.coverage"]
    cal, test = np.asarray(scores["cal"], dtype=float), np.asarray(scores["test"], dtype=float)
    coverage = coverage_statistic(alpha, quantile, coverage_splits, outcome["splits_seed"], min_coverage_fixed)
    c1 = Claim(f"C1-{family}", f"P(relative gap <= eps) >= 1 - alpha: mean coverage over random cal/test splits >= "
               f"{min_coverage_mean}, fixed split >= {min_coverage_fixed}", f"{1 - alpha:.0%} (0.1%-optimal w.p. 95%)",
               s["coverage_mean_over_splits"], min_coverage_mean,
               decide(lambda: on_interval(interval("C1", [cal, test], coverage,
                                                   f"calibration and test instances, a resample whose fixed split covers "
                                                   f"< {min_coverage_fixed} counting as -inf"), Gate(low=min_coverage_mean)),
                      decide_claims),
               {"fixed_split_coverage": fixed, "min_over_splits": s["coverage_min_over_splits"],
                "splits": len(outcome["split_coverages"]), "tau": _finite(s["tau"]), "calibration_instances": len(cal),
                "test_instances": len(test), "infinite_scores": int(np.isinf(np.concatenate([cal, test])).sum())} | left_out)

    times = per_test_instance(rows, ("network", "time"), ("scip_default", "time"))
    ratio = s["network.ratio_of_means"]
    c2 = Claim(f"C2-{family}", f"mean solve time of the method (inference included) <= {speed_ratio} x SCIP default's "
               "(ratio of means)", "> 60% less solve time (ratio <= 0.40)", ratio, speed_ratio,
               decide(lambda: on_interval(interval("C2", [times], ratio_of_means, "test instances"),
                                          Gate(high=speed_ratio)), decide_claims),
               {"network_time_s": times[:, 0].tolist(), "default_time_s": times[:, 1].tolist(),
                "mean_of_ratios": s["network.mean_of_ratios"], "oracle_ratio": s["oracle_ratio"],
                "oracle_mean_of_ratios": s["oracle_mean_of_ratios"], "fired": s["network.fired"],
                "never_fired": s["network.never_fired"], "inference_ms_per_sample": s["inference_ms_per_sample"],
                "online_replay_agreement": agreement, "online_stop_time_agreement": stop_times,
                "online_over_replay_time": online_time,
                **{f"{rule}.{k}": s[f"{rule}.{k}"] for rule in ("solution_limit_1", "solution_limit_3", "time_limit", "gap_rule")
                   for k in ("coverage", "ratio_of_means") if f"{rule}.{k}" in s}} | left_out)

    against_gap_rule = per_test_instance(rows, ("network", "time"), ("gap_rule", "time"), ("network", "covered"),
                                         ("gap_rule", "covered"))
    c3 = Claim(f"C3-{family}", "the network stops sooner than a conformally calibrated algorithmic-gap rule "
               f"(mean time ratio <= 1, both coverage >= {min_coverage_fixed})", "not in the paper (our addition)",
               s["network.mean_time_s"] / s["gap_rule.mean_time_s"], 1.0,
               decide(lambda: on_interval(interval("C3", [against_gap_rule], faster_with_coverage(min_coverage_fixed),
                                                   f"test instances, a resample where either rule covers "
                                                   f"< {min_coverage_fixed} counting as +inf"), Gate(high=1.0)),
                      decide_claims),
               {"network_mean_time_s": s["network.mean_time_s"], "gap_rule_mean_time_s": s["gap_rule.mean_time_s"],
                "gap_rule_time_s": against_gap_rule[:, 1].tolist(), "network_coverage": fixed,
                "gap_rule_coverage": s["gap_rule.coverage"]} | left_out)
    return [c1, c2, c3]
