"""ncrs plots: N(d) per method at the library margin (log-log), median gradient norm along the comparisons."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from tasks.core.plotting import new_figure, save


def n_against_d(cells: dict, dims: list[int], p: float, path: Path) -> Path:
    fig, ax = new_figure(f"comparisons N(d) to ||grad f|| <= eps (median), p = {p:g}", "ambient dimension d", "N(d)",
                         logx=True, logy=True)
    for method in dict.fromkeys(m for m, _, _ in cells):
        values = [float(np.median(cells[(method, d, p)]["hit"])) if (method, d, p) in cells else np.nan for d in dims]
        if np.isfinite(values).any():
            ax.plot(dims, values, "o-", label=method)
    ax.legend(fontsize=7)
    return save(fig, path)


def grad_traces(runs: dict[str, dict], title: str, path: Path) -> Path:
    fig, ax = new_figure(title, "comparisons", "median ||grad f||", logy=True)
    for label, run in runs.items():
        ax.plot(run["trace_queries"], np.maximum(run["trace_grad"], 1e-12), label=label, lw=1)
    ax.legend(fontsize=7)
    return save(fig, path)
