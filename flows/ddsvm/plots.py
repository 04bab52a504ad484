"""ddsvm plots: test error per method and read-out at the gated k, error and DDSVM's gain against k, the SVM
margins of the training features along DDSVM's refits, and examples of the generated depth images."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from tasks.core.plotting import new_figure, plt, save

from .claims import by_seed, paired, relative_gain
from .params import CE, DDSVM


def errors_by_method(rows: list[dict], k: int, methods: list[str], path: Path, data: str = "") -> Path:
    """`data`: what the title names the images by (empty for the digits)."""
    fig, ax = new_figure(f"{data}test error at k = {k} per class (mean +- std over seeds)", "method",
                         "top-1 error (%)")
    x = np.arange(len(methods))
    for offset, readout in ((-0.2, "head_error"), (0.2, "svm_error")):
        values = [by_seed(rows, m, k, readout) for m in methods]
        ax.bar(x + offset, [v.mean() for v in values], 0.4, yerr=[v.std() for v in values], capsize=3,
               label=readout.removesuffix("_error") + " read-out")
    ax.set_xticks(x, methods)
    ax.legend()
    return save(fig, path)


def errors_by_k(rows: list[dict], ks: list[int], methods: list[str], path: Path) -> Path:
    fig, ax = new_figure("test error against training images per class", "k", "top-1 error (%)", logx=True)
    for method in methods:
        for readout, style in (("head_error", "--"), ("svm_error", "-")):
            points = [(k, by_seed(rows, method, k, readout)) for k in ks]
            points = [(k, v.mean()) for k, v in points if len(v)]
            if points:
                ax.plot(*zip(*points), style, marker="o", label=f"{method} ({readout.removesuffix('_error')})")
    ax.legend(fontsize=7)
    return save(fig, path)


def gains_by_k(rows: list[dict], ks: list[int], path: Path) -> Path:
    """DDSVM's relative error reduction against CE at the same read-out (C5's gain), per k."""
    fig, ax = new_figure("DDSVM's relative error reduction against CE, same read-out", "k", "error reduction (%)",
                         logx=True)
    for readout, style in (("svm_error", "-"), ("head_error", "--")):
        groups = [(k, paired(rows, k, (DDSVM, readout), (CE, readout))) for k in ks]
        points = [(k, relative_gain(pairs)) for k, pairs in groups if len(pairs)]
        if points:
            ax.plot(*zip(*points), style, marker="o", label=f"{readout.removesuffix('_error')} vs {readout.removesuffix('_error')}")
    ax.axhline(0, color="grey", lw=0.5)
    ax.legend(fontsize=7)
    return save(fig, path)


def margins_along_training(rows: list[dict], k: int, method: str, reference: str, path: Path) -> Path:
    """Own-class geometric margins (min and mean over training samples) at each refit of `method`, seed 0,
    with the reference's final ones as horizontal lines."""
    fig, ax = new_figure(f"SVM margins of the training features, k = {k}, seed 0", "epoch", "geometric margin")
    run = next(r for r in rows if r["method"] == method and r["k"] == k and r["seed"] == 0)
    refits = [row for row in run["log"] if "margin_min" in row]
    for key in ("margin_min", "margin_mean"):
        ax.plot([row["epoch"] for row in refits], [row[key] for row in refits], label=f"{method} {key}")
    for r in rows:
        if r["method"] == reference and r["k"] == k and r["seed"] == 0:
            ax.axhline(r["margin_min"], ls=":", color="grey", label=f"{reference} final margin_min")
            ax.axhline(r["margin_mean"], ls="--", color="grey", label=f"{reference} final margin_mean")
    ax.legend(fontsize=7)
    return save(fig, path)


def depth_examples(x: np.ndarray, y: np.ndarray, classes: tuple[str, ...], path: Path, per_class: int = 6) -> Path:
    """The first `per_class` depth images of each class, one row per class."""
    fig, axes = plt.subplots(len(classes), per_class, figsize=(per_class, len(classes)), squeeze=False)
    for c, name in enumerate(classes):
        for j, index in enumerate(np.flatnonzero(y == c)[:per_class]):
            axes[c, j].imshow(x[index, 0], cmap="gray", vmin=0, vmax=1)
        for ax in axes[c]:
            ax.set_xticks([])
            ax.set_yticks([])
        axes[c, 0].set_ylabel(name, fontsize=7)
    fig.suptitle("generated depth images (nearness, 0 = background)", fontsize=8)
    return save(fig, path)
