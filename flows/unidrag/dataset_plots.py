"""Plots of the UniDrag data set: Cd per body type, silhouettes coloured by Cp, drag build-up
profiles, convergence traces. Each takes label records (dicts of arrays) and a path."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from tasks.cfd.vehicles import BODY_TYPES
from tasks.core.plotting import new_figure, save


def cd_per_body_type(types: list[str], cd: list[float], path: Path) -> Path:
    fig, ax = new_figure("Cd per body type (LBM labels)", "body type", "Cd (A_ref = frontal height)")
    ax.boxplot([[c for t, c in zip(types, cd) if t == body_type] for body_type in BODY_TYPES])
    ax.set_xticks(range(1, len(BODY_TYPES) + 1), BODY_TYPES)
    return save(fig, path)


def silhouettes_with_cp(records: list[dict], types: list[str], path: Path) -> Path:
    fig, axes = new_figure("Surface Cp on one silhouette per body type", "x / L", "z / L", ncols=len(records))
    for ax, record, body_type in zip(axes, records, types):
        points = record["surface_points"]
        dots = ax.scatter(points[:, 0], points[:, 1], c=record["surface_cp"], cmap="coolwarm", s=8)
        ax.set(title=body_type, aspect="equal")
        fig.colorbar(dots, ax=ax, shrink=0.6)
    return save(fig, path)


def drag_profiles(records: list[dict], types: list[str], path: Path) -> Path:
    fig, ax = new_figure("Drag build-up profiles C(xi)", "xi = (x - x_front) / L", "cumulative Cd")
    for record, body_type in zip(records, types):
        profile = record["profile"]
        ax.plot((np.arange(len(profile)) + 1) / len(profile), profile, color=f"C{BODY_TYPES.index(body_type)}",
                alpha=0.5)
    for k, body_type in enumerate(BODY_TYPES):
        ax.plot([], [], color=f"C{k}", label=body_type)
    ax.legend()
    return save(fig, path)


def convergence_traces(records: list[dict], types: list[str], average_steps: int, path: Path) -> Path:
    fig, ax = new_figure("Cd traces (shaded: last two averaging windows)", "step", "Cd")
    for record, body_type in zip(records, types):
        ax.plot(record["cd_trace"], color=f"C{BODY_TYPES.index(body_type)}", alpha=0.4, lw=0.8)
    steps = len(records[0]["cd_trace"])
    ax.axvspan(steps - 2 * average_steps, steps, color="grey", alpha=0.15)
    return save(fig, path)
