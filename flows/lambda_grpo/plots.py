"""lambda_grpo plots: validation accuracy vs RL step per method (mean over seeds with a min-max band and the
seeds as thin lines), and the histogram of |lambda| over the completion tokens of every RL group."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from tasks.core.plotting import new_figure, save

COLORS = {"grpo": "tab:blue", "lambda_grpo": "tab:red"}
LABELS = {"grpo": "GRPO", "lambda_grpo": "lambda-GRPO"}


def accuracy_curves(runs: list[dict], setting: dict, path: Path, metric: str) -> Path:
    fig, ax = new_figure(f"{metric} validation accuracy (G {setting['group_size']}, lr {setting['lr']:g}, "
                         f"{setting['aggregation']} mean)", "RL step", "accuracy")
    for method, color in COLORS.items():
        mine = [r for r in runs if r["method"] == method and r["setting"] == setting]
        if not mine:
            continue
        steps = [e["step"] for e in mine[0]["evals"]]
        values = np.array([[e[metric] for e in r["evals"]] for r in mine])
        for row in values:
            ax.plot(steps, row, color=color, lw=0.5, alpha=0.35)
        ax.fill_between(steps, values.min(0), values.max(0), color=color, alpha=0.12)
        ax.plot(steps, values.mean(0), color=color, lw=1.8, label=f"{LABELS[method]} (mean of {len(mine)} seeds)")
    ax.legend(fontsize=8)
    return save(fig, path)


def lambda_histogram(runs: list[dict], path: Path) -> Path:
    fig, ax = new_figure("|lambda| of completion tokens over all RL groups", "|lambda| (process-set size)",
                         "share of tokens", logy=True)
    for method, color in COLORS.items():
        counts = [s["lambda_histogram"] for r in runs if r["method"] == method for s in r["steps"]]
        if not counts:
            continue
        width = max(len(c) for c in counts)
        total = np.sum([np.pad(c, (0, width - len(c))) for c in counts], axis=0)
        sizes = np.arange(1, width + 1)
        offset = -0.2 if method == "grpo" else 0.2
        ax.bar(sizes + offset, total / total.sum(), width=0.4, color=color, label=LABELS[method])
    ax.legend(fontsize=8)
    return save(fig, path)
