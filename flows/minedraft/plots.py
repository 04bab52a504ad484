"""minedraft plots: throughput / latency vs k per configuration, and measured vs predicted PSD speed-up (medians over
repeats)."""
from __future__ import annotations

from pathlib import Path

from tasks.core.plotting import new_figure, save

COLORS = {"AR-1c": "tab:gray", "SD-1c": "tab:blue", "SD-2c": "tab:green", "PSD-2c": "tab:red"}


def by_k(summary: list[dict], metric: str, label: str, path: Path) -> Path:
    fig, ax = new_figure(f"{metric} per configuration (median over repeats)", "draft length k", label)
    for config, color in COLORS.items():
        rows = sorted((r for r in summary if r["config"] == config), key=lambda r: r["k"])
        if config == "AR-1c" and rows:
            ax.axhline(rows[0][metric], color=color, ls="--", label=config)
        elif rows:
            ax.plot([r["k"] for r in rows], [r[metric] for r in rows], "o-", color=color, label=config)
    ax.legend(fontsize=8)
    return save(fig, path)


def speedup(model: list[dict], path: Path) -> Path:
    fig, ax = new_figure("PSD-2c / SD-1c throughput: measured vs timing model", "draft length k", "ratio")
    rows = sorted(model, key=lambda r: r["k"])
    ax.plot([r["k"] for r in rows], [r["measured"] for r in rows], "o-", color="tab:red", label="measured")
    ax.plot([r["k"] for r in rows], [r["predicted"] for r in rows], "s--", color="black", label="S from the runs' busy times")
    ax.plot([r["k"] for r in rows], [r["predicted_calibrated"] for r in rows], "^:", color="tab:gray",
            label="S from the calibrations around them")
    ax.axhline(1.0, color="tab:gray", lw=0.8)
    ax.legend(fontsize=8)
    return save(fig, path)
