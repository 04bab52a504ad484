"""zovh plots: Hessian error per estimator and query budget (R-near), error per regime at the claims' budget, and
the descent curves of each method at its best step size."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from tasks.core.plotting import new_figure, save


def error_vs_queries(errors: dict, functions: list[str], estimators: list[str], path: Path) -> Path:
    fig, axes = new_figure("R-near: mean ||H_hat - H||_F against the query budget K", "K (new queries)",
                           "Frobenius error", logx=True, logy=True, ncols=len(functions))
    axes = axes if isinstance(axes, list) else [axes]
    for ax, fn in zip(axes, functions):
        for est in estimators:
            points = sorted((K, e) for (f, regime, name, K), e in errors.items() if f == fn and regime == "near" and name == est)
            if points:
                ax.plot(*zip(*points), marker="o", label=est)
        ax.set_title(fn)
        ax.legend(fontsize=7)
    return save(fig, path)


def error_by_regime(errors: dict, functions: list[str], estimators: list[str], K: int, path: Path) -> Path:
    fig, axes = new_figure(f"mean ||H_hat - H||_F at K = {K}: R-near (left bar) and R-paper (right bar)", "estimator",
                           "Frobenius error", logy=True, ncols=len(functions))
    axes = axes if isinstance(axes, list) else [axes]
    x = np.arange(len(estimators))
    for ax, fn in zip(axes, functions):
        for shift, regime in ((-0.2, "near"), (0.2, "paper")):
            ax.bar(x + shift, [errors.get((fn, regime, e, K), np.nan) for e in estimators], width=0.4, label=regime)
        ax.set_xticks(x, estimators, rotation=45, fontsize=7)
        ax.set_title(fn)
        ax.legend(fontsize=7)
    return save(fig, path)


def descent_curves(curves: dict, path: Path) -> Path:
    """curves: function -> method -> (steps, median f over seeds at the method's best lr)."""
    fig, axes = new_figure("descent at each method's best lr (median over seeds)", "iteration", "f(x_t)", logy=True,
                           ncols=len(curves))
    axes = axes if isinstance(axes, list) else [axes]
    for ax, (fn, methods) in zip(axes, curves.items()):
        for method, (steps, values) in methods.items():
            ax.plot(steps, values, label=method)
        ax.set_title(fn)
        ax.legend(fontsize=7)
    return save(fig, path)
