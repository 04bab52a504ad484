"""Calibration of every rule, replay on the test split, and the claim checks of spec §6.

The method (network + conformal tau) and the baselines (solver default, solution limits 1 and
3, the calibrated algorithmic-gap rule, the calibrated time limit) are all replayed into
StopOutcome rows, so the claims compare them side by side on the same instances.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict
from time import perf_counter

import numpy as np

from tasks.core.claims import Claim

from .conformal import (
    StopOutcome,
    algorithmic_gaps,
    calibrate,
    conformal_threshold,
    coverage_over_splits,
    quantile_index,
    stop_outcome,
    threshold_stop,
    time_limit_stop,
    time_limit_threshold,
    time_to_eps,
)
from .stopper import NetworkStopper
from .trajectory import Trajectory

Predictor = Callable[[Trajectory], np.ndarray]


def calibrate_family(cal: list[Trajectory], predict: Predictor, alpha: float, eps: float, quantile: str) -> dict:
    """tau of the network, of the algorithmic-gap rule (same scores with U - L) and the time limit."""
    rs = [t.r for t in cal]
    tau, scores = calibrate([predict(t) for t in cal], rs, alpha=alpha, eps=eps, method=quantile)
    tau_gap, gap_scores = calibrate([algorithmic_gaps(t) for t in cal], rs, alpha=alpha, eps=eps, method=quantile)
    times = [time_to_eps(t, eps) for t in cal]
    return {
        "n": len(cal), "alpha": alpha, "epsilon": eps, "quantile": quantile, "j": quantile_index(len(cal), alpha),
        "network": {"scores": scores.tolist(), "tau": tau, "tau_numpy": conformal_threshold(scores, alpha, "numpy")},
        "gap_rule": {"scores": gap_scores.tolist(), "tau": tau_gap},
        "time_limit": {"times": times, "tau": time_limit_threshold(times, alpha)},
    }


def online_inference_seconds(stopper: NetworkStopper, trajectory: Trajectory) -> float:
    """Steady per-sample cost of online inference: the stopper fed one recorded solve row by row
    (after one warm-up row: torch's first call pays one-off set-up, once per process, not per sample)."""
    columns = {"t": trajectory.t, "lb": trajectory.lb, "ub": trajectory.ub}
    stopper({name: values[:1] for name, values in columns.items()})
    start = perf_counter()
    for k in range(2, len(trajectory) + 1):
        stopper({name: values[:k] for name, values in columns.items()})
    return (perf_counter() - start) / max(len(trajectory) - 1, 1)


def limited_outcome(limited: Trajectory, full: Trajectory, rule: str, eps: float) -> StopOutcome:
    """A solution-limit solve, judged against the full solve's U_final."""
    gap = (limited.final_ub - full.final_ub) / (abs(full.final_ub) + 0.1)
    return StopOutcome(full.instance, rule, len(limited) - 1, limited.solve_time, limited.final_ub, float(gap),
                       limited.status == "bestsollimit", bool(gap <= eps))


def evaluate_family(cal: list[Trajectory], test: list[Trajectory], limits: dict[int, list[Trajectory]],
                    calibration: dict, predict: Predictor, inference_s: float, alpha: float, eps: float,
                    quantile: str, n_splits: int, seed: int) -> dict:
    """Replay every rule on the test split; coverage over random splits of the pooled cal + test."""
    tau, tau_gap, tau_time = (calibration[k]["tau"] for k in ("network", "gap_rule", "time_limit"))
    predictions = {t.instance: predict(t) for t in cal + test}
    limited = {k: {t.instance: t for t in trajectories} for k, trajectories in limits.items()}
    outcomes: list[StopOutcome] = []
    for t in test:
        outcomes += [
            stop_outcome(t, len(t) - 1, rule="scip_default", eps=eps),
            threshold_stop(t, predictions[t.instance], tau, rule="network", eps=eps, inference_s=inference_s),
            threshold_stop(t, algorithmic_gaps(t), tau_gap, rule="gap_rule", eps=eps),
            time_limit_stop(t, tau_time, eps=eps),
            *(limited_outcome(limited[k][t.instance], t, f"solution_limit_{k}", eps) for k in sorted(limited)),
        ]
    default_time = {t.instance: t.solve_time for t in test}
    rows = [asdict(o) | {"default_time": default_time[o.instance]} for o in outcomes]
    oracle = [time_to_eps(t, eps) / t.solve_time for t in test]
    pooled = cal + test
    splits = coverage_over_splits([predictions[t.instance] for t in pooled], [t.r for t in pooled],
                                  [t.nsols for t in pooled], alpha=alpha, eps=eps, n_splits=n_splits, seed=seed,
                                  method=quantile)
    return {"rows": rows, "split_coverages": splits, "predictions": predictions,
            "summary": summarize(rows, oracle, splits, tau, inference_s)}


def summarize(rows: list[dict], oracle: list[float], splits: list[float], tau: float, inference_s: float) -> dict:
    """Per rule: coverage, mean time, ratio of means and mean of ratios against SCIP default."""
    summary = {"tau": tau, "inference_ms_per_sample": 1e3 * inference_s, "oracle_ratio": float(np.mean(oracle)),
               "coverage_mean_over_splits": float(np.mean(splits)), "coverage_min_over_splits": float(np.min(splits))}
    default = float(np.mean([r["time"] for r in rows if r["rule"] == "scip_default"]))
    for rule in dict.fromkeys(r["rule"] for r in rows):
        mine = [r for r in rows if r["rule"] == rule]
        summary |= {f"{rule}.coverage": float(np.mean([r["covered"] for r in mine])),
                    f"{rule}.mean_time_s": float(np.mean([r["time"] for r in mine])),
                    f"{rule}.ratio_of_means": float(np.mean([r["time"] for r in mine])) / default,
                    f"{rule}.mean_of_ratios": float(np.mean([r["time"] / r["default_time"] for r in mine])),
                    f"{rule}.stopped_early": int(sum(r["stopped_early"] for r in mine))}
    summary["network.never_fired"] = sum(1 for r in rows if r["rule"] == "network" and not r["stopped_early"])
    return summary


def compare_online(online: list[dict], rows: list[dict]) -> list[dict]:
    """Online re-solves next to the replay of the same instance (objectives should agree)."""
    replay = {r["instance"]: r for r in rows if r["rule"] == "network"}
    compared = []
    for run in online:
        mine = replay[run["instance"]]
        agree = abs(run["objective"] - mine["objective"]) <= 1e-6 * max(1.0, abs(mine["objective"]))
        compared.append({"family": run["family"], "instance": run["instance"], "online_objective": run["objective"],
                         "replay_objective": mine["objective"], "agree": agree, "online_time_s": run["time"],
                         "replay_time_s": mine["time"], "online_status": run["status"], "online_stopped": run["stopped"]})
    return compared


def _finite(value: float) -> float | str:
    return value if math.isfinite(value) else str(value)


def family_claims(family: str, outcome: dict, online: list[dict], *, alpha: float, speed_ratio: float,
                  min_coverage_mean: float, min_coverage_fixed: float, decide: bool) -> list[Claim]:
    """Claims 1-3 of spec §6 for one family (passed = None when the profile cannot decide)."""
    s = outcome["summary"]
    agreement = float(np.mean([o["agree"] for o in online])) if online else None

    def decided(ok: bool) -> bool | None:
        return bool(ok) if decide else None

    fixed = s["network.coverage"]
    c1 = Claim(f"C1-{family}", f"P(relative gap <= eps) >= 1 - alpha: mean coverage over random cal/test splits >= "
               f"{min_coverage_mean}, fixed split >= {min_coverage_fixed}", f"{1 - alpha:.0%} (0.1%-optimal w.p. 95%)",
               s["coverage_mean_over_splits"], min_coverage_mean,
               decided(s["coverage_mean_over_splits"] >= min_coverage_mean and fixed >= min_coverage_fixed),
               {"fixed_split_coverage": fixed, "min_over_splits": s["coverage_min_over_splits"],
                "splits": len(outcome["split_coverages"]), "tau": _finite(s["tau"])})
    ratio = s["network.ratio_of_means"]
    c2 = Claim(f"C2-{family}", f"mean solve time of the method (inference included) <= {speed_ratio} x SCIP default's "
               "(ratio of means)", "> 60% less solve time (ratio <= 0.40)", ratio, speed_ratio, decided(ratio <= speed_ratio),
               {"mean_of_ratios": s["network.mean_of_ratios"], "oracle_ratio": s["oracle_ratio"],
                "never_fired": s["network.never_fired"], "inference_ms_per_sample": s["inference_ms_per_sample"],
                "online_replay_agreement": agreement,
                **{f"{rule}.{k}": s[f"{rule}.{k}"] for rule in ("solution_limit_1", "solution_limit_3", "time_limit", "gap_rule")
                   for k in ("coverage", "ratio_of_means") if f"{rule}.{k}" in s}})
    network, gap_rule = s["network.mean_time_s"], s["gap_rule.mean_time_s"]
    c3 = Claim(f"C3-{family}", "the network stops sooner than a conformally calibrated algorithmic-gap rule "
               f"(mean time ratio <= 1, both coverage >= {min_coverage_fixed})", "not in the paper (our addition)",
               network / gap_rule, 1.0,
               decided(network <= gap_rule and fixed >= min_coverage_fixed and s["gap_rule.coverage"] >= min_coverage_fixed),
               {"network_mean_time_s": network, "gap_rule_mean_time_s": gap_rule, "gap_rule_coverage": s["gap_rule.coverage"]})
    return [c1, c2, c3]
