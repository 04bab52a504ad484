"""Matplotlib without a screen, one look for every paper's plots."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def new_figure(title: str, xlabel: str, ylabel: str, *, logx=False, logy=False, ncols=1):
    """A titled figure of `ncols` panels side by side; returns (fig, ax) or (fig, [axes])."""
    fig, axes = plt.subplots(1, ncols, figsize=(6 * ncols, 4), dpi=110, squeeze=False)
    fig.suptitle(title)
    for ax in axes[0]:
        ax.set(xlabel=xlabel, ylabel=ylabel)
        ax.set_xscale("log" if logx else "linear")
        ax.set_yscale("log" if logy else "linear")
        ax.grid(True, alpha=0.3)
    return fig, (list(axes[0]) if ncols > 1 else axes[0][0])


def save(fig, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
