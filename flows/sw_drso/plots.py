"""Accuracy against corruption level, one panel per corruption kind, one line per method (mean over seeds)."""
from __future__ import annotations

from pathlib import Path

from tasks.core.plotting import new_figure, save

KIND_PANELS = ("outliers", "drop", "local_drop")


def accuracy_curves(means: dict[str, dict[str, float]], title: str, path: Path) -> Path:
    """`means`: method -> {"clean": acc, "outliers-0.1": acc, ...}; each panel starts at level 0 (clean)."""
    fig, axes = new_figure(title, "corruption level r", "accuracy", ncols=len(KIND_PANELS))
    for ax, kind in zip(axes, KIND_PANELS):
        ax.set_title(kind)
        for method, row in means.items():
            levels = sorted(float(name.split("-")[1]) for name in row if name.startswith(f"{kind}-"))
            ax.plot([0.0] + levels, [row["clean"]] + [row[f"{kind}-{r:g}"] for r in levels], marker="o", label=method)
        ax.set_ylim(0, 1)
    axes[0].legend()
    return save(fig, path)
