"""riemannian_dueling plots: E1 relative gap per method along the comparisons, E1 B(n) against n, E2 relative gap
along the comparisons, E3 median sub-optimality against the horizon."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from tasks.core.plotting import new_figure, save

from .summaries import EVALUATIONS_PER_QUERY


def gap_traces(runs: dict[str, dict], f_star: float, title: str, path: Path, relative_to_f0: bool = True) -> Path:
    """One instance's relative gap per method; RZO's evaluations drawn at their comparison equivalent."""
    fig, ax = new_figure(title, "comparisons (RZO: evaluations / 2)", "relative gap", logy=True)
    f0 = runs["rdngd"]["f"][0]
    for method, run in runs.items():
        if method == "rgd":
            continue
        scale = (f0 - f_star) if relative_to_f0 else f_star
        gap = np.maximum((run["f"] - f_star) / scale, 1e-16)
        ax.plot(run["queries"] / EVALUATIONS_PER_QUERY.get(method, 1), gap, label=method, lw=1)
    ax.legend(fontsize=7)
    return save(fig, path)


def hitting_counts(B: dict[int, dict[str, float]], path: Path) -> Path:
    fig, ax = new_figure("E1: median comparisons B(n) to a relative gap of 0.05", "n", "B(n)", logx=True, logy=True)
    dims = sorted(B)
    for method in next(iter(B.values())):
        values = [B[n][method] for n in dims]
        if np.isfinite(values).any():
            ax.plot(dims, values, "o-", label=method)
    ax.legend(fontsize=7)
    return save(fig, path)


def horizon_rate(horizons: list[int], medians: dict[str, list[float]], path: Path) -> Path:
    """One line of median sub-optimality per target (interior and boundary optimum), a 1/T guide at the first."""
    fig, ax = new_figure("E3: RDFW median sub-optimality against the horizon", "horizon T", "f(x_T) - f*",
                         logx=True, logy=True)
    for label, values in medians.items():
        ax.plot(horizons, values, "o-", label=f"RDFW, {label}")
    first = next(iter(medians.values()))
    ax.plot(horizons, first[0] * horizons[0] / np.asarray(horizons, float), "k--", lw=0.8, label="1/T")
    ax.legend(fontsize=7)
    return save(fig, path)
