"""sps_safe plots: relative sub-optimality per method (log y, mean +- std over seeds), step sizes and gradient norms
along a run, and the digits MLP's test accuracy and gradient norms."""
from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from tasks.core.plotting import new_figure, save


def _colors(count: int):
    return plt.get_cmap("tab20")(np.linspace(0, 1, max(count, 2)))


def _band(ax, x, mean, std, label, color, floor=None):
    ax.plot(x, mean, label=label, color=color, lw=1.2)
    low = mean - std if floor is None else np.maximum(mean - std, floor)
    ax.fill_between(x, low, mean + std, color=color, alpha=0.15)


def rel_subopt(summary: dict[str, dict], problem: str, path: Path) -> Path:
    fig, ax = new_figure(f"{problem}: relative sub-optimality (mean +- std over seeds)", "epoch",
                         "(f - f*) / (f0 - f*)", logy=True)
    for (label, row), color in zip(summary.items(), _colors(len(summary))):
        floor = max(row["mean"][row["mean"] > 0].min(initial=1.0) * 1e-2, 1e-12)
        _band(ax, np.arange(len(row["mean"])), np.maximum(row["mean"], floor), row["std"], label, color, floor)
    ax.legend(fontsize=6, ncol=2)
    return save(fig, path)


def traces(run: dict, key: str, problem: str, ylabel: str, path: Path) -> Path:
    """One seed's traced per-step values (step sizes or gradient norms) of every method."""
    fig, ax = new_figure(f"{problem}: {ylabel} along the run (seed {run['seed']})", "step", ylabel, logy=True)
    for label, values, color in zip(run["labels"], run[key], _colors(len(run["labels"]))):
        positive = values > 0
        ax.plot(run["trace_steps"][positive], values[positive], label=label, color=color, lw=0.8)
    ax.legend(fontsize=6, ncol=2)
    return save(fig, path)


def digits_accuracy(summary: dict[str, dict], path: Path) -> Path:
    fig, ax = new_figure("digits MLP: test accuracy (mean +- std over seeds)", "epoch", "test accuracy")
    for (label, row), color in zip(summary.items(), _colors(len(summary))):
        _band(ax, np.arange(len(row["accuracy_mean"])), row["accuracy_mean"], row["accuracy_std"], label, color)
    ax.legend(fontsize=7)
    return save(fig, path)


def digits_traces(runs: list[dict], path: Path) -> Path:
    """Mini-batch gradient norm (left) and Polyak step size (right) per step, first seed of each optimizer."""
    fig, (left, right) = new_figure("digits MLP: per-step gradient norm and step size", "step", "||g||", logy=True, ncols=2)
    right.set_ylabel("step size")
    first_seeds: dict[str, dict] = {}
    for run in runs:
        first_seeds.setdefault(run["label"], run)
    for run, color in zip(first_seeds.values(), _colors(len(first_seeds))):
        steps = np.arange(1, len(run["grad_norm"]) + 1)
        left.plot(steps, run["grad_norm"], label=run["label"], color=color, lw=0.8)
        if np.isfinite(run["step_size"]).any():
            right.plot(steps, run["step_size"], label=run["label"], color=color, lw=0.8)
    left.legend(fontsize=7)
    right.legend(fontsize=7)
    return save(fig, path)
