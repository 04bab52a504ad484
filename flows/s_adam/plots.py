"""Plots of the S-Adam runs: per-epoch curves with seed bands and LGI traces; Rosenbrock paths."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from tasks.core.plotting import new_figure, save
from tasks.train.synthetic import ns_rosenbrock

PANELS = (("train_loss", "train loss"), ("test_accuracy", "test accuracy"), ("mean_rho", "mean LGI rho"),
          ("mean_damp", "mean damping exp(-lambda rho)"))


def epoch_curves(runs: list[dict], task: str, path: Path) -> Path:
    """Median over seeds (line) and min-max band per optimizer, for each per-epoch quantity."""
    fig, axes = new_figure(f"S-Adam: {task}", "epoch", "", ncols=len(PANELS))
    by_optimizer: dict[str, list[dict]] = {}
    for run in runs:
        if run["task"] == task:
            by_optimizer.setdefault(run["optimizer"], []).append(run)
    for ax, (key, label) in zip(axes, PANELS):
        ax.set_ylabel(label)
        for optimizer, group in sorted(by_optimizer.items()):
            if group[0]["epochs"][0].get(key) is None:
                continue  # no LGI for AdamW / Prox-SGD
            values = np.array([[row[key] for row in run["epochs"]] for run in group])
            epochs = np.arange(1, values.shape[1] + 1)
            ax.plot(epochs, np.median(values, axis=0), label=optimizer)
            ax.fill_between(epochs, values.min(axis=0), values.max(axis=0), alpha=0.2)
        ax.legend(fontsize=7)
    return save(fig, path)


def rosenbrock_paths(runs: list[dict], path: Path) -> Path:
    """Iterates over the contours of f(x, y) = 10 |y - x^2| + |1 - x|, and y - x^2 along them."""
    fig, (paths, ridge) = new_figure("nonsmooth Rosenbrock", "x", "y", ncols=2)
    grid_x, grid_y = np.meshgrid(np.linspace(-2, 2, 200), np.linspace(-1, 4, 200))
    values = ns_rosenbrock(torch.from_numpy(np.stack([grid_x, grid_y], axis=-1))).numpy()
    paths.contour(grid_x, grid_y, values, levels=20, linewidths=0.5, cmap="Greys")
    paths.plot([1.0], [1.0], "k*", markersize=10)
    ridge.set(xlabel="step", ylabel="y - x^2")
    for run in sorted(runs, key=lambda r: (r["optimizer"], r["seed"])):
        label = f"{run['optimizer']} seed {run['seed']}"
        trajectory = run["trajectory"]
        paths.plot(trajectory[:, 0], trajectory[:, 1], linewidth=0.7, label=label)
        ridge.plot(trajectory[:, 1] - trajectory[:, 0] ** 2, linewidth=0.5, label=label)
    paths.legend(fontsize=6)
    return save(fig, path)
