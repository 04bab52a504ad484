"""prox_last_iterate plots: gap against the horizon T (last, uniform average, suffix average; log-log, mean over
seeds per c) and the last iterate's gap along the longest run."""
from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from tasks.core.plotting import new_figure, save

STYLES = {"last": "-", "average": "--", "suffix_average": ":"}


def gap_vs_horizon(rows: list[dict], problem: str, path: Path) -> Path:
    fig, ax = new_figure(f"{problem}: F - F* at the horizon T (mean over seeds)", "T", "F - F*", logx=True, logy=True)
    cs = sorted({r["c"] for r in rows})
    colors = plt.get_cmap("viridis")(np.linspace(0, 0.9, max(len(cs), 2)))
    for c, color in zip(cs, colors):
        mine = sorted((r for r in rows if r["c"] == c), key=lambda r: r["T"])
        for name, style in STYLES.items():
            ax.plot([r["T"] for r in mine], [r[f"{name}_gap_mean"] for r in mine], style, marker="o", color=color,
                    label=f"c {c:g} {name}")
    ax.legend(fontsize=7, ncol=2)
    return save(fig, path)


def gap_along_run(by_T: dict, cs: list[float], problem: str, path: Path) -> Path:
    T = max(by_T)
    run = by_T[T]
    fig, ax = new_figure(f"{problem}: last iterate F(x_k) - F* along the T = {T} run (mean over seeds)", "k", "F - F*",
                         logx=True, logy=True)
    for ci, c in enumerate(cs):
        ax.plot(run["record_steps"], np.maximum(run["record_gaps"][:, ci].mean(0), 1e-16), label=f"c {c:g}")
    ax.legend(fontsize=7)
    return save(fig, path)
