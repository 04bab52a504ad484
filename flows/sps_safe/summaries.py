"""sps_safe summaries over seeds: per-method relative sub-optimality of the convex problems (P1, P2), the digits
MLP's diagnostics (P3), and the flat metrics.json."""
from __future__ import annotations

import math

import numpy as np

# The last-k-epoch average of the relative sub-optimality (fixed before any result): k = the last 10% of the
# epochs, rounded up, at least 1 (P1 default: 50 epochs -> the last 5; smoke: 5 epochs -> the final one).
LAST_EPOCHS_FRACTION = 0.1


def last_k(epochs: int) -> int:
    """How many final epochs the last-k average covers."""
    return max(1, math.ceil(LAST_EPOCHS_FRACTION * epochs))


def summarize_problem(runs: list[dict]) -> dict[str, dict]:
    """label -> method, mean/std relative sub-optimality per epoch, the final value over the seeds' runs (mean, std,
    median and each seed's), the mean over seeds of its average over the last `last_k` epochs, mean safeguard
    fraction, g = 0 steps in all. `runs`: one sweep per seed (same methods in the same order)."""
    summary = {}
    for r, method in enumerate(runs[0]["methods"]):
        curves = np.stack([run["rel_subopt"][r] for run in runs])
        k = last_k(curves.shape[1] - 1)
        summary[runs[0]["labels"][r]] = {
            **method, "seeds": len(runs), "mean": curves.mean(0), "std": curves.std(0),
            "final_mean": float(curves[:, -1].mean()), "final_std": float(curves[:, -1].std()),
            "final_median": float(np.median(curves[:, -1])), "last_k": k,
            "last_k_mean": float(curves[:, -k:].mean(1).mean()), "final_by_seed": curves[:, -1],
            "safeguard_fraction": float(np.mean([run["safeguard_fraction"][r] for run in runs])),
            "zero_grad_steps": int(sum(run["zero_grad_steps"][r] for run in runs)),
        }
    return summary


def initial_values(runs: list[dict]) -> list[float]:
    """f(x0) of each seed's instance (every method of a sweep starts from the same x0)."""
    return [float(run["objective"][0, 0]) for run in runs]


def grad_norm_ratio(grad_norm: np.ndarray, per_epoch: int) -> float:
    """Median mini-batch gradient norm of the last epoch over that of the first (spec §6 P3 diagnostic)."""
    return float(np.median(grad_norm[-per_epoch:]) / np.median(grad_norm[:per_epoch]))


def summarize_digits(runs: list[dict]) -> dict[str, dict]:
    """label -> final test accuracy mean/std over seeds, mean last/first-epoch gradient-norm ratio, wall time
    (the P3 diagnostics: reported, no pass/fail)."""
    summary = {}
    for label in dict.fromkeys(run["label"] for run in runs):
        mine = [run for run in runs if run["label"] == label]
        accuracy = np.stack([run["test_accuracy"] for run in mine])
        summary[label] = {"kind": mine[0]["kind"], "seeds": len(mine), "accuracy_mean": accuracy.mean(0),
                          "accuracy_std": accuracy.std(0), "final_accuracy": float(accuracy[:, -1].mean()),
                          "final_accuracy_std": float(accuracy[:, -1].std()),
                          "grad_norm_ratio": float(np.mean([grad_norm_ratio(r["grad_norm"], r["steps_per_epoch"])
                                                            for r in mine])),
                          "wall_time_s": float(np.mean([r["wall_time_s"] for r in mine]))}
    return summary


def metrics(problems: dict[str, dict], digits: dict[str, dict]) -> dict[str, float]:
    """Flat metrics.json: final relative sub-optimality and safeguard share per problem and method; P3 diagnostics."""
    flat = {}
    for problem, summary in problems.items():
        for label, row in summary.items():
            flat[f"{problem}.{label}.final_rel_subopt"] = row["final_mean"]
            flat[f"{problem}.{label}.final_rel_subopt_median"] = row["final_median"]
            flat[f"{problem}.{label}.last_k_rel_subopt"] = row["last_k_mean"]
            if np.isfinite(row["safeguard_fraction"]):
                flat[f"{problem}.{label}.safeguard_fraction"] = row["safeguard_fraction"]
            flat[f"{problem}.{label}.zero_grad_steps"] = row["zero_grad_steps"]
    for label, row in digits.items():
        flat[f"digits.{label}.test_accuracy"] = row["final_accuracy"]
        flat[f"digits.{label}.grad_norm_ratio"] = row["grad_norm_ratio"]
    return flat
