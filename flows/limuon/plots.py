"""The LiMuon plots from its run records: loss curves, estimator error, state sizes, compression error."""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np

from tasks.core.plotting import new_figure, save

def _band(ax, series: list[tuple[list, list]], label: str) -> None:
    """Median over seeds with a min-max band (series: one (steps, values) per seed, same steps)."""
    steps = series[0][0]
    values = np.array([v for _, v in series])
    line, = ax.plot(steps, np.median(values, axis=0), label=label)
    if len(series) > 1:
        ax.fill_between(steps, values.min(axis=0), values.max(axis=0), color=line.get_color(), alpha=0.2)


def _by_optimizer(runs: list[dict], **where) -> dict[str, list[dict]]:
    grouped = defaultdict(list)
    for run in runs:
        if all(run.get(k) == v for k, v in where.items()):
            grouped[run["optimizer"]].append(run)
    return grouped


def loss_curves(runs: list[dict], path: Path) -> Path:
    """mat-ls full-data loss per sigma, and char-LM validation loss, per optimizer with seed bands."""
    sigmas = sorted({r["sigma"] for r in runs if r["task"] == "mat_ls"})
    fig, axes = new_figure("LiMuon vs Muon: loss by step", "step", "loss", logy=True, ncols=len(sigmas) + 1)
    for ax, sigma in zip(axes, sigmas):
        ax.set_title(f"mat-ls, sigma={sigma} (full-data loss)")
        for name, members in _by_optimizer(runs, task="mat_ls", sigma=sigma).items():
            _band(ax, [([e["step"] for e in r["evals"]], [e["full_loss"] for e in r["evals"]]) for r in members], name)
        ax.legend()
    ax = axes[-1]
    ax.set_title("stdlib char-LM (validation loss, nats/char)")
    for name, members in _by_optimizer(runs, task="charlm").items():
        _band(ax, [([e["step"] for e in r["evals"]], [e["loss"] for e in r["evals"]]) for r in members], name)
    ax.legend()
    return save(fig, path)


def estimator_error(runs: list[dict], path: Path) -> Path:
    """||M_t - grad F(W_t)||_F / ||grad F(W_t)||_F on mat-ls, per sigma."""
    sigmas = sorted({r["sigma"] for r in runs if r["task"] == "mat_ls"})
    fig, axes = new_figure("mat-ls estimator error", "step", "relative error", logy=True, ncols=max(len(sigmas), 1))
    for ax, sigma in zip(axes if isinstance(axes, list) else [axes], sigmas):
        ax.set_title(f"sigma={sigma}")
        for name, members in _by_optimizer(runs, task="mat_ls", sigma=sigma).items():
            _band(ax, [([e["step"] for e in r["evals"]], [e["estimator_error"] for e in r["evals"]]) for r in members], name)
        ax.legend()
    return save(fig, path)


def state_sizes(runs: list[dict], path: Path) -> Path:
    """Persistent optimizer state elements per char-LM optimizer: estimator / momentum, previous weights, aux AdamW."""
    states = {r["optimizer"]: r["state"] for r in runs if r["task"] == "charlm"}
    fig, ax = new_figure("char-LM optimizer state (elements)", "optimizer", "elements")
    names = list(states)
    bottom = np.zeros(len(names))
    for part in ("estimator", "previous_weights", "aux"):
        heights = np.array([states[n][part] for n in names], dtype=float)
        ax.bar(names, heights, bottom=bottom, label=part)
        bottom += heights
    ax.tick_params(axis="x", rotation=30)
    ax.legend()
    return save(fig, path)


def compression_traces(runs: list[dict], path: Path) -> Path:
    """LiMuon#2's relative RSVD compression error ||M - Mhat||_F / ||M||_F by step (char-LM)."""
    fig, ax = new_figure("LiMuon#2 state compression error (char-LM)", "step", "||M - Mhat|| / ||M||")
    for name, members in _by_optimizer(runs, task="charlm").items():
        if members[0]["curve"] and "compression_error" in members[0]["curve"][0]:
            _band(ax, [([c["step"] for c in r["curve"]], [c["compression_error"] for c in r["curve"]]) for r in members], name)
    ax.legend()
    return save(fig, path)
