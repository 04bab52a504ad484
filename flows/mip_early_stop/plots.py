"""The mip_early_stop plots: coverage over splits, time saved per rule, predicted vs true gap."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from tasks.core.plotting import new_figure, save
from tasks.mip.trajectory import Trajectory


def coverage_plot(coverages: list[float], target: float, family: str, path: Path) -> Path:
    fig, ax = new_figure(f"{family}: coverage over {len(coverages)} random cal/test splits", "coverage on the test half",
                         "splits")
    ax.hist(coverages, bins=np.linspace(min(coverages + [target]) - 0.025, 1.0125, 20), color="tab:blue", alpha=0.8)
    ax.axvline(target, color="tab:red", linestyle="--", label=f"1 - alpha = {target:.2f}")
    ax.axvline(float(np.mean(coverages)), color="black", label=f"mean {np.mean(coverages):.3f}")
    ax.legend()
    return save(fig, path)


def time_saving_plot(rows: list[dict], family: str, path: Path) -> Path:
    """Distribution of time / SCIP-default time per rule, and each rule's coverage in its label."""
    fig, ax = new_figure(f"{family}: solve time relative to SCIP default (test split)", "rule", "time / default time")
    rules = list(dict.fromkeys(r["rule"] for r in rows))
    ratios = [[r["time"] / r["default_time"] for r in rows if r["rule"] == rule] for rule in rules]
    coverage = [np.mean([r["covered"] for r in rows if r["rule"] == rule]) for rule in rules]
    ax.boxplot(ratios, whis=(5, 95))
    ax.set_xticks(range(1, len(rules) + 1), [f"{rule}\ncov {c:.2f}" for rule, c in zip(rules, coverage)], fontsize=7)
    ax.axhline(1.0, color="grey", linewidth=0.8)
    return save(fig, path)


def gap_trajectories_plot(examples: list[tuple[Trajectory, np.ndarray]], tau: float, family: str, path: Path) -> Path:
    """True absolute gap U - U_final, predicted gap and U - L along a few test solves."""
    fig, axes = new_figure(f"{family}: predicted vs true gap along test solves", "wall time (s)", "absolute gap",
                           logy=True, ncols=len(examples))
    for ax, (trajectory, predicted) in zip(np.atleast_1d(axes), examples):
        floor = 1e-3  # zero gaps drawn on the log axis at a visible floor
        ax.plot(trajectory.wall, np.maximum(trajectory.y, floor), label="true U - U_final")
        ax.plot(trajectory.wall, np.maximum(predicted, floor), label="predicted")
        ax.plot(trajectory.wall, np.maximum(trajectory.ub - trajectory.lb, floor), label="U - L", alpha=0.5)
        if np.isfinite(tau):
            ax.axhline(max(tau, floor), color="tab:red", linestyle="--", label="tau")
        ax.set_title(trajectory.instance, fontsize=8)
    np.atleast_1d(axes)[0].legend(fontsize=7)
    return save(fig, path)
