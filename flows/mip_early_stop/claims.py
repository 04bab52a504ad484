"""The claim checks C1-C3 of spec mip_early_stop §6 for one family, from its replay summary (replay.py)."""
from __future__ import annotations

import math

import numpy as np

from tasks.core.claims import Claim, decided


def _finite(value: float) -> float | str:
    return value if math.isfinite(value) else str(value)


def family_claims(family: str, outcome: dict, online: list[dict], *, alpha: float, speed_ratio: float,
                  min_coverage_mean: float, min_coverage_fixed: float, decide: bool) -> list[Claim]:
    """Claims 1-3 of spec §6 for one family (passed = None when the profile cannot decide)."""
    s = outcome["summary"]
    agreement = float(np.mean([o["agree"] for o in online])) if online else None
    online_time = (float(np.mean([o["online_time_s"] for o in online]) / np.mean([o["replay_time_s"] for o in online]))
                   if online else None)

    fixed = s["network.coverage"]
    c1 = Claim(f"C1-{family}", f"P(relative gap <= eps) >= 1 - alpha: mean coverage over random cal/test splits >= "
               f"{min_coverage_mean}, fixed split >= {min_coverage_fixed}", f"{1 - alpha:.0%} (0.1%-optimal w.p. 95%)",
               s["coverage_mean_over_splits"], min_coverage_mean,
               decided(s["coverage_mean_over_splits"] >= min_coverage_mean and fixed >= min_coverage_fixed, decide),
               {"fixed_split_coverage": fixed, "min_over_splits": s["coverage_min_over_splits"],
                "splits": len(outcome["split_coverages"]), "tau": _finite(s["tau"])})
    ratio = s["network.ratio_of_means"]
    c2 = Claim(f"C2-{family}", f"mean solve time of the method (inference included) <= {speed_ratio} x SCIP default's "
               "(ratio of means)", "> 60% less solve time (ratio <= 0.40)", ratio, speed_ratio,
               decided(ratio <= speed_ratio, decide),
               {"mean_of_ratios": s["network.mean_of_ratios"], "oracle_ratio": s["oracle_ratio"],
                "oracle_mean_of_ratios": s["oracle_mean_of_ratios"], "fired": s["network.fired"],
                "never_fired": s["network.never_fired"], "inference_ms_per_sample": s["inference_ms_per_sample"],
                "online_replay_agreement": agreement, "online_over_replay_time": online_time,
                **{f"{rule}.{k}": s[f"{rule}.{k}"] for rule in ("solution_limit_1", "solution_limit_3", "time_limit", "gap_rule")
                   for k in ("coverage", "ratio_of_means") if f"{rule}.{k}" in s}})
    network, gap_rule = s["network.mean_time_s"], s["gap_rule.mean_time_s"]
    c3 = Claim(f"C3-{family}", "the network stops sooner than a conformally calibrated algorithmic-gap rule "
               f"(mean time ratio <= 1, both coverage >= {min_coverage_fixed})", "not in the paper (our addition)",
               network / gap_rule, 1.0,
               decided(network <= gap_rule and fixed >= min_coverage_fixed and s["gap_rule.coverage"] >= min_coverage_fixed,
                       decide),
               {"network_mean_time_s": network, "gap_rule_mean_time_s": gap_rule, "gap_rule_coverage": s["gap_rule.coverage"]})
    return [c1, c2, c3]
