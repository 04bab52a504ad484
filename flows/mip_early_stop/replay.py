"""Replay of every stopping rule on the test split, online re-solves next to their replay, and the summary
the claims read (spec §3.7, baselines §4.2-4.6).

The method (network + conformal tau) and the baselines (solver default, solution limits 1 and
3, the calibrated algorithmic-gap rule, the calibrated time limit) are all replayed into
StopOutcome rows, so the claims compare them side by side on the same instances. The method's
inference cost per eligible row is the one its online re-solves measured (`online_inference`).
"""
from __future__ import annotations

from dataclasses import asdict

import numpy as np

from tasks.mip.conformal import (
    StopOutcome,
    algorithmic_gaps,
    coverage_over_splits,
    stop_outcome,
    threshold_stop,
    score,
    time_limit_stop,
    time_to_eps,
)
from tasks.mip.features import eligible_rows
from tasks.mip.trajectory import PROVED, Trajectory

from .calibration import Predictor


def online_inference(online: list[dict]) -> float:
    """Seconds per eligible row the stopper spent on features and the network, pooled over the
    online re-solves (measured inside them, so it is what a stopped solve pays)."""
    rows = sum(run["inferences"] for run in online)
    return sum(run["inference_s"] for run in online) / rows if rows else 0.0


def limited_outcome(limited: Trajectory, full: Trajectory, rule: str, eps: float) -> StopOutcome:
    """A solution-limit solve, judged against the full solve's U_final."""
    gap = (limited.final_ub - full.final_ub) / (abs(full.final_ub) + 0.1)
    return StopOutcome(full.instance, rule, len(limited) - 1, limited.solve_time, limited.final_ub, float(gap),
                       limited.status == "bestsollimit", bool(gap <= eps))


def evaluate_family(cal: list[Trajectory], test: list[Trajectory], limits: dict[int, list[Trajectory]],
                    calibration: dict, predict: Predictor, inference_s: float, alpha: float, eps: float,
                    quantile: str, n_splits: int, seed: int, solver_gap: float) -> dict:
    """Replay every rule on the test split; coverage over random splits of the pooled cal + test (drawn from `seed`);
    the network's conformal score of every calibration and test instance (C1's bootstrap recalibrates on them).
    inference_s is charged to the method for each eligible row up to its stop (the rows it ran on)."""
    tau, tau_gap, tau_time = (calibration[k]["tau"] for k in ("network", "gap_rule", "time_limit"))
    predictions = {t.instance: predict(t) for t in cal + test}
    limited = {k: {t.instance: t for t in trajectories} for k, trajectories in limits.items()}
    outcomes: list[StopOutcome] = []
    for t in test:
        outcomes += [
            stop_outcome(t, len(t) - 1, rule="scip_default", eps=eps, solver_gap=solver_gap),
            threshold_stop(t, predictions[t.instance], tau, rule="network", eps=eps,
                           inference_s=inference_s * eligible_rows(t), solver_gap=solver_gap),
            threshold_stop(t, algorithmic_gaps(t), tau_gap, rule="gap_rule", eps=eps, solver_gap=solver_gap),
            time_limit_stop(t, tau_time, eps=eps),
            *(limited_outcome(limited[k][t.instance], t, f"solution_limit_{k}", eps) for k in sorted(limited)),
        ]
    default_time = {t.instance: t.solve_time for t in test}
    rows = [asdict(o) | {"default_time": default_time[o.instance]} for o in outcomes]
    oracle = [time_to_eps(t, eps) for t in test]
    pooled = cal + test
    splits = coverage_over_splits([predictions[t.instance] for t in pooled], [t.r for t in pooled],
                                  [t.nsols for t in pooled], alpha=alpha, eps=eps, n_splits=n_splits, seed=seed,
                                  method=quantile)
    scores = {name: [score(predictions[t.instance], t.r, eps) for t in split] for name, split in (("cal", cal), ("test", test))}
    return {"rows": rows, "split_coverages": splits, "splits_seed": seed, "scores": scores, "predictions": predictions,
            "summary": summarize(rows, oracle, splits, tau, inference_s)}


def summarize(rows: list[dict], oracle: list[float], splits: list[float], tau: float, inference_s: float) -> dict:
    """Per rule: coverage, mean time, ratio of means and mean of ratios against SCIP default, and
    how often it fired (stopped before SCIP would have finished). The oracle (time of the first
    eps-optimal incumbent) as a ratio of means like C2, and as a mean of ratios."""
    default_times = [r["time"] for r in rows if r["rule"] == "scip_default"]
    default = float(np.mean(default_times))
    summary = {"tau": tau, "inference_ms_per_sample": 1e3 * inference_s,
               "oracle_ratio": float(np.mean(oracle)) / default,
               "oracle_mean_of_ratios": float(np.mean(np.divide(oracle, default_times))),
               "coverage_mean_over_splits": float(np.mean(splits)), "coverage_min_over_splits": float(np.min(splits))}
    for rule in dict.fromkeys(r["rule"] for r in rows):
        mine = [r for r in rows if r["rule"] == rule]
        summary |= {f"{rule}.coverage": float(np.mean([r["covered"] for r in mine])),
                    f"{rule}.mean_time_s": float(np.mean([r["time"] for r in mine])),
                    f"{rule}.ratio_of_means": float(np.mean([r["time"] for r in mine])) / default,
                    f"{rule}.mean_of_ratios": float(np.mean([r["time"] / r["default_time"] for r in mine])),
                    f"{rule}.fired": int(sum(r["stopped_early"] for r in mine))}
    summary["network.never_fired"] = sum(1 for r in rows if r["rule"] == "network" and not r["stopped_early"])
    return summary


STOP_TIME_SAMPLES = 2  # the same crossing may fall a sample earlier or later online, either way
STOP_TIME_RELATIVE = 0.10  # CPU time of the same solve varies by a few percent between runs


def stop_time_tolerance(replay_t: float, sample_dt: float) -> float:
    """How far (feature-clock seconds) an online stop may lie from the replayed one and still be the same stop."""
    return max(STOP_TIME_SAMPLES * sample_dt, STOP_TIME_RELATIVE * replay_t)


def status_as_expected(run: dict) -> bool:
    """Spec §10 safety: a run the stopper interrupted ends "userinterrupt"; any other ends proved, not at a limit."""
    return run["status"] == "userinterrupt" if run["stopped_at"] is not None else run["status"] in PROVED


def compare_online(online: list[dict], rows: list[dict], test: dict[str, Trajectory], sample_dt: float) -> list[dict]:
    """Online re-solves next to the replay of the same instance (test: the recorded solves by instance).

    They agree when both return the same objective, both fired or both did not, the online solve
    stopped exactly where the rule fires on its own recorded rows (rule_index), and its status is
    the expected one (status_as_expected: within its limits). Their stop times on the feature
    clock (CPU seconds less the handler's) are judged separately, as `stop_time_agrees` within
    stop_time_tolerance: the clock's noise is real, so it is reported, not folded into `agree`.
    online_time_s includes the inference the online run measured, replay_time_s the inference
    it was charged (wall clock, what a user waits)."""
    replay = {r["instance"]: r for r in rows if r["rule"] == "network"}
    compared = []
    for run in online:
        mine = replay[run["instance"]]
        same_objective = abs(run["objective"] - mine["objective"]) <= 1e-6 * max(1.0, abs(mine["objective"]))
        where_rule_says = run["rule_index"] == run["stopped_at"]
        replay_t = float(test[run["instance"]].t[mine["index"]])
        compared.append({"family": run["family"], "instance": run["instance"], "online_objective": run["objective"],
                         "replay_objective": mine["objective"],
                         "agree": bool(same_objective and run["fired"] == mine["stopped_early"] and where_rule_says
                                       and status_as_expected(run)),
                         "stop_time_agrees": bool(abs(run["stop_t"] - replay_t) <= stop_time_tolerance(replay_t, sample_dt)),
                         "online_stop_t": run["stop_t"], "replay_stop_t": replay_t,
                         "stops_where_rule_says": bool(where_rule_says),
                         "online_time_s": run["time"], "replay_time_s": mine["time"],
                         "time_ratio_online_over_replay": run["time"] / mine["time"],
                         "online_fired": run["fired"], "replay_fired": mine["stopped_early"],
                         "online_status": run["status"]})
    return compared
