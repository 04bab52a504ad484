"""Learning-rate calibration on a grid that widens at its edges: one rule for every calibrated method.

The rule, decided before any result is seen:
1. Evaluate every point of the method's grid (sorted, positive, distinct) and pick the lowest validation loss;
   a non-finite loss (a diverged run) never wins.
2. If the pick is the smallest or the largest point, add one point beyond that edge with the grid's own spacing
   there (edge x edge / neighbour: a grid {0.01, 0.02, 0.04} whose best is 0.04 gets 0.08), evaluate it, pick again.
3. Repeat until the pick is interior or `max_extensions` points were added; the result says whether the pick is
   still at an edge then.
A one-point grid has no edge: it is a pass-through (its point is the pick, nothing is added).

`calibrate_grids` runs the rule for several methods at once: each round hands every pending (method, lr) to one
`evaluate` call, so a caller can run them in parallel.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

MAX_EXTENSIONS = 3
Edge = Literal["low", "high"]


def check_grid(grid: Sequence[float], name: str = "grid") -> list[float]:
    """The grid as a list; it must be non-empty, positive, strictly increasing."""
    points = [float(x) for x in grid]
    if not points:
        raise ValueError(f"{name}: needs at least one learning rate, got []")
    if any(not math.isfinite(x) or x <= 0 for x in points):
        raise ValueError(f"{name}: learning rates must be finite and > 0, got {points}")
    if any(b <= a for a, b in zip(points, points[1:])):
        raise ValueError(f"{name}: learning rates must be strictly increasing, got {points}")
    return points


def check_same_shape(grids: Mapping[str, Sequence[float]]) -> None:
    """Equal tuning effort: every method's grid has the same number of points."""
    sizes = {name: len(grid) for name, grid in grids.items()}
    if len(set(sizes.values())) > 1:
        raise ValueError(f"calibration grids: every method needs the same number of points, got {sizes}")


TIE_TOLERANCE = 1e-9  # relative: losses this close are equal (rounding must not decide a pick, nor widen a grid)


def best_point(losses: Mapping[float, float]) -> float:
    """The learning rate with the lowest finite loss; losses within TIE_TOLERANCE (relative) of the lowest tie,
    and a tie goes to the smaller rate."""
    finite = {lr: loss for lr, loss in losses.items() if math.isfinite(loss)}
    if not finite:
        raise ValueError(f"calibration: every grid point diverged ({dict(losses)})")
    lowest = min(finite.values())
    return min(lr for lr, loss in finite.items() if loss <= lowest + TIE_TOLERANCE * abs(lowest))


def edge_of(losses: Mapping[float, float]) -> Edge | None:
    """'low' / 'high' when the pick is the smallest / largest of two or more points, else None."""
    if len(losses) < 2:
        return None
    best, points = best_point(losses), sorted(losses)
    return "low" if best == points[0] else "high" if best == points[-1] else None


def next_point(losses: Mapping[float, float]) -> float | None:
    """The point beyond the pick's edge, with the spacing of the two outermost points there (None: interior or
    a one-point grid). Rounded to 12 significant digits, so 3e-3 x 3 is 0.009."""
    edge = edge_of(losses)
    if edge is None:
        return None
    points = sorted(losses)
    outer, inner = (points[0], points[1]) if edge == "low" else (points[-1], points[-2])
    return float(f"{outer * outer / inner:.12g}")


@dataclass(frozen=True)
class GridResult:
    """One method's calibration: every evaluated point (ascending), the initial grid, the pick, and the edge the
    pick still sits at after the last extension (None: interior, or a one-point grid)."""

    losses: dict[float, float]
    initial: tuple[float, ...]
    best_lr: float
    edge: Edge | None
    extensions: int
    max_extensions: int

    def to_json(self) -> dict:
        return {"grid": {str(lr): loss for lr, loss in self.losses.items()}, "initial_grid": list(self.initial),
                "best_lr": self.best_lr, "at_edge": self.edge is not None, "edge": self.edge,
                "extensions": self.extensions, "max_extensions": self.max_extensions}

    def metrics(self, prefix: str) -> dict[str, float]:
        """Flat numbers for a tracker: each point's loss, the pick, whether it is at an edge, the extensions."""
        return ({f"{prefix}.lr_{lr:g}.val_loss": loss for lr, loss in self.losses.items()}
                | {f"{prefix}.best_lr": self.best_lr, f"{prefix}.at_edge": float(self.edge is not None),
                   f"{prefix}.extensions": float(self.extensions)})


Evaluate = Callable[[list[tuple[str, float]]], list[float]]


def calibrate_grids(grids: Mapping[str, Sequence[float]], evaluate: Evaluate, *,
                    max_extensions: int = MAX_EXTENSIONS) -> dict[str, GridResult]:
    """The rule above for every method of `grids` (method -> its initial grid); `evaluate` maps a list of
    (method, lr) to their validation losses, in order."""
    if max_extensions < 0:
        raise ValueError(f"max_extensions: must be >= 0, got {max_extensions}")
    initial = {name: check_grid(grid, f"calibration grid {name}") for name, grid in grids.items()}
    losses: dict[str, dict[float, float]] = {name: {} for name in initial}
    added = dict.fromkeys(initial, 0)
    pending = [(name, lr) for name, grid in initial.items() for lr in grid]
    while pending:
        for (name, lr), loss in zip(pending, evaluate(pending), strict=True):
            losses[name][lr] = float(loss)
        pending = []
        for name in initial:
            point = next_point(losses[name]) if added[name] < max_extensions else None
            if point is not None:
                added[name] += 1
                pending.append((name, point))
    return {name: GridResult(dict(sorted(losses[name].items())), tuple(initial[name]), best_point(losses[name]),
                             edge_of(losses[name]), added[name], max_extensions)
            for name in initial}
