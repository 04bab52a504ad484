"""The se3_sync plots: error vs noise per method, wall time vs n, DQGPM convergence."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from tasks.core.plotting import new_figure, save
from tasks.sync.store import load_result

from .errors import median_by


def plot_error_vs_noise(rows: list[dict], family: str, methods: list[str], path: Path) -> Path:
    fig, (rot_ax, trans_ax) = new_figure(f"{family}: error vs noise (median over trials of per-node medians)",
                                         "noise sigma", "rotation error (deg)", logy=True, ncols=2)
    trans_ax.set_ylabel("translation error (scene units)")
    for method in methods:
        rot, trans = median_by(rows, family, method, "rot_median"), median_by(rows, family, method, "trans_median")
        rot_ax.plot(list(rot), list(rot.values()), marker="o", label=method)
        trans_ax.plot(list(trans), list(trans.values()), marker="o", label=method)
    rot_ax.legend()
    return save(fig, path)


def plot_time_vs_n(timing: list[dict], path: Path) -> Path:
    fig, ax = new_figure("wall time vs n (BLAS on 1 thread; solid: mean degree fixed, dashed: SLAM-like chains)",
                         "n", "median wall time (s)", logx=True, logy=True)
    curve = [r for r in timing if r["purpose"] == "curve" and r["blas_threads"] == 1]
    for family, style in (("er", "-"), ("chain", "--")):
        for method in sorted({r["method"] for r in curve}):
            mine = [r for r in curve if (r.get("family", "er"), r["method"]) == (family, method)]
            ns = sorted({r["n"] for r in mine})
            if ns:
                ax.plot(ns, [np.median([t for r in mine if r["n"] == n for t in r["times"]]) for n in ns],
                        style, marker="o", label=f"{method} ({family})")
    ax.legend(fontsize="small")
    return save(fig, path)


def plot_convergence(runs: Path, instances: list[Path], path: Path) -> Path:
    """DQGPM's iterate change on the first trial of each geometric noise level."""
    fig, ax = new_figure("DQGPM iterate change per iteration (geometric)", "iteration",
                         "max_i ||s_i^{k+1} - s_i^k|| (rotation part)", logy=True)
    for instance in [p for p in instances if p.stem.startswith("geometric") and p.stem.endswith("_t0")]:
        history = load_result(runs / f"dqgpm__{instance.stem}.npz").history
        ax.plot(range(1, len(history) + 1), history, label=instance.stem.split("_")[1].removeprefix("s"))
    ax.legend(title="noise sigma")
    return save(fig, path)
