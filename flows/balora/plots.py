"""balora plots: the synthetic excess loss (median and IQR over inits, the paper's Fig. 3), the condition numbers at
the end points, the fine-tuning test loss at each method's best point (chosen on the validation windows), and the
lr x scale grids of the final test loss."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from tasks.core.plotting import new_figure, save

COLORS = {"lora": "tab:blue", "balora": "tab:red", "balora_aligned": "tab:orange"}
LABELS = {"lora": "LoRA", "balora": "BaLoRA (svd)", "balora_aligned": "BaLoRA (aligned)"}


def synthetic_curves(runs: list[dict], optimizer: str, path: Path) -> Path:
    fig, ax = new_figure(f"synthetic 1/2||W0 + AB - T||^2, {optimizer}, best lr per run", "step",
                         "loss - optimal loss", logy=True)
    for method, color in COLORS.items():
        curves = np.array([r["excess"] for r in runs if r["optimizer"] == optimizer and r["method"] == method])
        if not len(curves):
            continue
        curves = np.maximum(curves, 1e-16)
        q1, median, q3 = np.percentile(curves, [25, 50, 75], axis=0)
        ax.fill_between(range(len(median)), q1, q3, color=color, alpha=0.15)
        ax.plot(median, color=color, label=f"{LABELS[method]} (median of {len(curves)})")
    ax.legend(fontsize=8)
    return save(fig, path)


def condition_numbers(conditioning: dict, path: Path) -> Path:
    fig, ax = new_figure("Hessian condition number at the end points", "init", "kappa", logy=True)
    for offset, method in ((-0.2, "lora"), (0.2, "balora")):
        kappas = [r["kappa"] for r in conditioning["rows"] if r["method"] == method]
        ax.bar(np.arange(len(kappas)) + offset, kappas, width=0.4, color=COLORS[method], label=LABELS[method])
    ax.axhline(conditioning["kappa_closed_form"], color="k", ls="--", lw=1, label="2 s1/(s_r - s_r+1)")
    ax.legend(fontsize=8)
    return save(fig, path)


def eval_curves(summary: dict, path: Path) -> Path:
    fig, ax = new_figure("fine-tuning test loss at each method's best grid point (chosen on validation)", "step",
                         "test loss")
    for method, row in summary["C"].items():
        ax.plot(row["steps"], row["mean_curve"], color=COLORS[method],
                label=f"{LABELS[method]} lr {row['lr']:g} scale {row['scale']:g} ({row['seeds']} seeds)")
    ax.legend(fontsize=8)
    return save(fig, path)


def grid_heatmaps(summary: dict, path: Path) -> Path:
    methods = list(summary["C"])
    fig, axes = new_figure("final test loss over the lr x scale grid (seed 0)", "scale", "lr", ncols=len(methods))
    axes = np.atleast_1d(axes)
    for ax, method in zip(axes, methods):
        grid = summary["C"][method]["grid"]
        lrs, scales = sorted({g["lr"] for g in grid}), sorted({g["scale"] for g in grid})
        values = np.full((len(lrs), len(scales)), np.nan)
        for g in grid:
            values[lrs.index(g["lr"]), scales.index(g["scale"])] = g["final_test"]
        image = ax.imshow(values, origin="lower", cmap="viridis")
        ax.set_xticks(range(len(scales)), [f"{s:g}" for s in scales])
        ax.set_yticks(range(len(lrs)), [f"{lr:g}" for lr in lrs])
        ax.set_title(LABELS[method], fontsize=9)
        fig.colorbar(image, ax=ax)
    return save(fig, path)
