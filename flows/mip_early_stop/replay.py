"""Replay of every stopping rule on the test split, online re-solves next to their replay, and the summary
the claims read (spec §3.7, baselines §4.2-4.6).

The method (network + conformal tau) and the baselines (solver default, solution limits 1 and
3, the calibrated algorithmic-gap rule, the calibrated time limit) are all replayed into
StopOutcome rows, so the claims compare them side by side on the same instances.
"""
from __future__ import annotations

from dataclasses import asdict
from time import perf_counter

import numpy as np

from tasks.mip.conformal import (
    StopOutcome,
    algorithmic_gaps,
    coverage_over_splits,
    stop_outcome,
    threshold_stop,
    time_limit_stop,
    time_to_eps,
)
from tasks.mip.stopper import NetworkStopper
from tasks.mip.trajectory import Trajectory

from .calibration import Predictor


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
