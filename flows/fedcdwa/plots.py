"""fedcdwa plots: accuracy vs alpha per method (95 % intervals over seeds), per-round curves at the hardest alpha,
communication bytes per round."""
from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from tasks.core.plotting import new_figure, save

from .summaries import label_of


def _colors(count: int):
    return plt.get_cmap("tab10")(np.linspace(0, 1, max(count, 2)))


def accuracy_vs_alpha(table: dict, path: Path) -> Path:
    fig, (left, right) = new_figure("global (left) and personalised (right) accuracy, 95 % interval over seeds",
                                    "Dirichlet alpha", "accuracy", logx=True, ncols=2)
    labels = sorted({row["label"] for row in table.values()})
    for label, color in zip(labels, _colors(len(labels))):
        rows = sorted((row for row in table.values() if row["label"] == label), key=lambda r: r["alpha"])
        alphas = [r["alpha"] for r in rows]
        style = dict(color=color, marker="o", ms=3, lw=1, capsize=2, ls="-" if len(rows) > 1 else "none")
        left.errorbar(alphas, [r["global_mean"] for r in rows], [r["global_ci95"] for r in rows], label=label, **style)
        right.errorbar(alphas, [r["personal_mean"] for r in rows], [r["personal_ci95"] for r in rows], label=label, **style)
    left.legend(fontsize=6)
    return save(fig, path)


def rounds(records: list[dict], key: str, alpha: float, path: Path) -> Path:
    """`key` per round at `alpha`, mean over seeds, per method label (those that log it)."""
    fig, ax = new_figure(f"{key} per round, alpha = {alpha:g} (mean over seeds)", "round", key)
    groups: dict[str, list] = {}
    for r in records:
        if r["alpha"] == alpha and key in r["history"]:
            groups.setdefault(label_of(r), []).append(r["history"][key])
    for (label, curves), color in zip(sorted(groups.items()), _colors(len(groups))):
        ax.plot(np.arange(1, len(curves[0]) + 1), np.mean(curves, axis=0), label=label, color=color, lw=1)
    if groups:
        ax.legend(fontsize=6)
    return save(fig, path)


def bytes_per_round(table: dict, path: Path) -> Path:
    fig, ax = new_figure("communication per round, all clients (float32 payloads)", "method", "bytes per round")
    rows = {}
    for row in table.values():
        rows.setdefault(row["label"], row)
    labels = sorted(rows)
    x = np.arange(len(labels))
    ax.bar(x - 0.2, [rows[k]["bytes_up_per_round"] for k in labels], 0.4, label="up (clients -> server)")
    ax.bar(x + 0.2, [rows[k]["bytes_down_per_round"] for k in labels], 0.4, label="down (server -> clients)")
    ax.set_xticks(x, labels, rotation=45, ha="right", fontsize=6)
    ax.legend(fontsize=7)
    return save(fig, path)
