"""metadistill plots: final precision per BBOB function and variant (mean over seeds, the seeds' range as a bar),
the COCO-style runtime ECDF (fraction of (function, seed, target) triples reached against evaluations), and the
training curves (distillation KL per epoch, the baseline's meta-fitness per meta-epoch)."""
from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from tasks.core.plotting import new_figure, save

from .summaries import PRECISION_FLOOR

TARGETS = 10.0 ** np.arange(2, -8.1, -0.5)  # precision targets of the ECDF (COCO's 1e2 .. 1e-8)


def _colors(count: int):
    return plt.get_cmap("tab10")(np.arange(count))


def final_precision(rows: list[dict], dim: int, names: list[str], path: Path) -> Path:
    mine = [row for row in rows if row["dim"] == dim]
    fig, ax = new_figure(f"BBOB d = {dim}: final best-of-generation precision (mean, seeds' range)", "function",
                         "f - f_opt", logy=True)
    x = np.arange(len(mine))
    width = 0.8 / len(names)
    for i, (name, color) in enumerate(zip(names, _colors(len(names)))):
        mean = np.maximum([row[f"{name}.precision"] for row in mine], PRECISION_FLOOR)
        low = np.maximum([row[f"{name}.precision_min"] for row in mine], PRECISION_FLOOR)
        high = np.maximum([row[f"{name}.precision_max"] for row in mine], PRECISION_FLOOR)
        ax.errorbar(x + (i - len(names) / 2 + 0.5) * width, mean, yerr=[mean - low, high - mean], fmt="o", ms=3,
                    color=color, label=name, lw=0.8)
    ax.set_xticks(x, [f"f{row['fid']}" for row in mine], fontsize=6)
    ax.legend(fontsize=7)
    return save(fig, path)


def ecdf(table: pd.DataFrame, names: list[str], path: Path) -> Path:
    """For each variant: the fraction of (function, seed, target) triples whose best-so-far precision has reached
    the target, against the evaluations spent (the view behind COCO's ERT plots)."""
    fig, ax = new_figure("runtime ECDF over functions, seeds and targets 1e2..1e-8", "evaluations",
                         "fraction of targets reached")
    for name, color in zip(names, _colors(len(names))):
        mine = table[table.variant == name]
        precision = (mine.best_so_far - mine.f_opt).to_numpy()
        runs = precision.reshape(-1, mine.generation.max() + 1)  # rows: runs in table order, columns: generations
        reached = (runs[:, :, None] <= TARGETS[None, None, :]).mean(axis=(0, 2))
        ax.step(np.sort(mine.evaluations.unique()), reached, where="post", label=name, color=color)
    ax.legend(fontsize=7)
    return save(fig, path)


def training(curves: dict, path: Path) -> Path:
    fig, (left, right) = new_figure("training", "epoch", "mean KL(student || teacher)", ncols=2)
    left.plot(curves["distill_loss"], marker="o", ms=3)
    left.axvline(curves["best_epoch"], color="grey", ls=":", label="best epoch")
    left.legend(fontsize=7)
    right.plot(curves["meta_curve"], marker="o", ms=3, color="C1")
    right.set_xlabel("meta-epoch")
    right.set_ylabel("baseline: median over functions of mean log10 best")
    return save(fig, path)
