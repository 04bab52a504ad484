"""Plots of UniDrag's surrogates and optimisations: validation R^2 vs training steps, predicted vs LBM
Cd, drag build-up before and after optimisation, surface Cp predicted vs LBM, deformed silhouettes.
Each takes arrays (or the train report's rows) and a path."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from tasks.core.plotting import new_figure, save


def validation_curves(report: list[dict], path: Path) -> Path:
    """Validation R^2_Cd vs step of every trained network (one colour per kind, one line style per
    seed), the kept (best) step marked; the line ends where early stopping ended the run."""
    fig, ax = new_figure("Validation R^2 of Cd vs training steps (o: weights kept)", "step", "validation R^2_Cd")
    kinds = sorted({row["kind"] for row in report if row.get("val_curve")})
    for row in report:
        if not row.get("val_curve"):
            continue
        steps, r2 = np.array(row["val_curve"]).T
        colour, style = f"C{kinds.index(row['kind'])}", ("-", "--", ":", "-.")[row["seed_number"] % 4]
        ax.plot(steps, r2, color=colour, ls=style, label=f"{row['kind']} seed {row['seed_number']}")
        best = list(steps).index(row["best_step"])
        ax.plot(steps[best], r2[best], "o", color=colour)
    ax.set_ylim(bottom=max(0.0, ax.get_ylim()[0]))
    ax.legend(fontsize=7)
    return save(fig, path)


def predicted_vs_lbm_cd(cd_lbm: np.ndarray, predicted: dict[str, np.ndarray], path: Path) -> Path:
    fig, ax = new_figure("Test split: predicted vs LBM Cd", "LBM Cd", "predicted Cd")
    for name, values in predicted.items():
        ax.scatter(cd_lbm, values, s=14, label=name, alpha=0.7)
    low, high = float(np.min(cd_lbm)), float(np.max(cd_lbm))
    ax.plot([low, high], [low, high], "k--", lw=0.8)
    ax.legend()
    return save(fig, path)


def profiles_before_after(base: list[np.ndarray], optimised: list[np.ndarray], names: list[str], path: Path) -> Path:
    """LBM drag build-up of each base shape (solid) and its EoT-optimised shape (dashed), base A_ref."""
    fig, ax = new_figure("Drag build-up before (solid) and after EoT optimisation (dashed), LBM",
                         "xi = (x - x_front) / L", "cumulative Cd (base A_ref)")
    for k, (before, after, name) in enumerate(zip(base, optimised, names)):
        xi = (np.arange(len(before)) + 1) / len(before)
        ax.plot(xi, before, color=f"C{k}", label=name)
        ax.plot(xi, after, color=f"C{k}", ls="--")
    ax.legend(fontsize=7)
    return save(fig, path)


def surface_cp(points: np.ndarray, cp_lbm: np.ndarray, cp_predicted: np.ndarray, path: Path) -> Path:
    fig, axes = new_figure("Surface Cp of a test shape: LBM vs UniDrag", "x / L", "z / L", ncols=2)
    limits = (min(cp_lbm.min(), cp_predicted.min()), max(cp_lbm.max(), cp_predicted.max()))
    for ax, values, title in zip(axes, (cp_lbm, cp_predicted), ("LBM", "UniDrag")):
        dots = ax.scatter(points[:, 0], points[:, 1], c=values, cmap="coolwarm", s=10, vmin=limits[0], vmax=limits[1])
        ax.set(title=title, aspect="equal")
        fig.colorbar(dots, ax=ax, shrink=0.6)
    return save(fig, path)


def deformed_silhouettes(base: list[np.ndarray], deformed: dict[str, list[np.ndarray]], names: list[str],
                         path: Path) -> Path:
    """One panel per shape: the base silhouette and each method's deformed one (z exaggerated 1x)."""
    fig, axes = new_figure("Base (black) and optimised silhouettes", "x / L", "z / L", ncols=len(base))
    for ax, k in zip(np.atleast_1d(axes), range(len(base))):
        closed = lambda c: np.concatenate([c, c[:1]])
        ax.plot(*closed(base[k]).T, "k", lw=1)
        for j, (method, contours) in enumerate(deformed.items()):
            ax.plot(*closed(contours[k]).T, color=f"C{j}", lw=0.8, label=method)
        ax.set(title=names[k], aspect="equal")
    np.atleast_1d(axes)[0].legend(fontsize=7)
    return save(fig, path)
