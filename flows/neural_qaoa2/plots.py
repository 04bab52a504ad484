"""The neural_qaoa2 plots: performance ratio per policy, and the critic's calibration."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from tasks.core.plotting import new_figure, save


def rho_per_policy(per_graph: list[dict], policies: tuple[str, ...], path: Path) -> Path:
    """Distribution over test graphs of each policy's mean rho, in- and out-of-distribution."""
    fig, axes = new_figure("performance ratio per policy (mean of runs per graph)", "policy", "rho", ncols=2)
    for ax, split in zip(axes, ("test_id", "test_ood")):
        data = [[r["rho"] for r in per_graph if r["policy"] == p and r["split"] == split] for p in policies]
        ax.boxplot(data, whis=(5, 95))
        ax.set_xticks(range(1, len(policies) + 1), policies, fontsize=8)
        ax.set_title(split.replace("_", " "), fontsize=9)
    return save(fig, path)


def critic_calibration(heldout: list[dict], path: Path) -> Path:
    """Critic prediction vs realised rho on held-out QAOA^2 runs (and the modularity baseline)."""
    fig, (ax, mod_ax) = new_figure("held-out QAOA^2 runs on the test graphs", "realised rho", "critic rho-hat", ncols=2)
    rho = np.array([h["rho"] for h in heldout])
    ax.scatter(rho, [h["rho_hat"] for h in heldout], s=12, alpha=0.7)
    lo, hi = float(rho.min()), float(rho.max())
    ax.plot([lo, hi], [lo, hi], color="grey", linewidth=0.8)
    mod_ax.scatter(rho, [h["modularity"] for h in heldout], s=12, alpha=0.7, color="tab:orange")
    mod_ax.set_ylabel("modularity of the level-0 partition")
    return save(fig, path)
