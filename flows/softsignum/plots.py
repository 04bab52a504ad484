"""Plots of the SoftSignum runs: evaluation curves per optimizer with seed bands, and temperature traces."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from tasks.core.plotting import new_figure, save

EVAL_KEY = {"quad_het": ("f", "f(x) (noise-free)"), "mat_het": ("loss", "full-data loss"), "charlm": ("loss", "val loss")}


def _groups(records: list[dict], task: str) -> dict[str, list[dict]]:
    groups: dict[str, list[dict]] = {}
    for record in records:
        if record["task"] == task:
            groups.setdefault(record["optimizer"], []).append(record)
    return dict(sorted(groups.items()))


def eval_curves(records: list[dict], task: str, path: Path) -> Path:
    """Median over seeds and min-max band per optimizer; dotted line at T_sign of the soft methods."""
    key, label = EVAL_KEY[task]
    fig, ax = new_figure(f"SoftSignum: {task}", "step", label, logy=True)
    for name, group in _groups(records, task).items():
        values = np.array([[row[key] for row in r["evals"]] for r in group])
        steps = [row["step"] for row in group[0]["evals"]]
        ax.plot(steps, np.median(values, axis=0), label=name)
        ax.fill_between(steps, values.min(axis=0), values.max(axis=0), alpha=0.2)
        if group[0]["t_sign"] is not None:
            ax.axvline(group[0]["t_sign"], color="grey", linestyle=":", linewidth=0.8)
    ax.legend(fontsize=7)
    return save(fig, path)


def temperature_traces(records: list[dict], task: str, path: Path) -> Path:
    """tau and the saturated fraction per step for the soft methods (first seed), after T_sign."""
    fig, (tau_ax, sat_ax) = new_figure(f"SoftSignum: {task} temperature", "step", "tau", logy=True, ncols=2)
    sat_ax.set(ylabel="saturated fraction", yscale="linear")
    for name, group in _groups(records, task).items():
        record = min(group, key=lambda r: r["seed"])
        rows = [row for row in record["curve"] if row.get("phase") == "soft"]
        if not rows:
            continue
        steps = [row["step"] for row in rows]
        tau_ax.plot(steps, [row["tau"] for row in rows], label=name)
        sat_ax.plot(steps, [row["saturated_fraction"] for row in rows], label=name)
    tau_ax.legend(fontsize=7)
    return save(fig, path)
