"""Equal tuning effort for C1's baselines: the project's one calibration rule (tasks.train.lr_grid) on the grids
that C1 takes at their best point (params.TUNED: P1's SGD gamma and SPS_max gamma_b).

The loss of a grid point is C1's verdict statistic, the mean over seeds of the final relative sub-optimality
(summaries' `final_mean`). The initial grid's losses come from the problem's main sweeps (one per seed); every
point the rule adds (beyond an edge pick, with the grid's own spacing there, at most MAX_EXTENSIONS per grid)
runs as its own one-method sweep per seed, on that seed's instance and sample indices (common random numbers
with the main sweep), so the main sweep and its numbers are untouched. A one-point grid passes through.

The solve stage writes the record (`record`) to runs/calibration.json and the added sweeps to
runs/widened/{problem}_{k}_{label}.npz; the evaluate stage folds them into each seed's sweep (`merge_runs`), so
every summary, statistic and claim of the problem sees the widened grid.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from tasks.train.lr_grid import MAX_EXTENSIONS, GridResult, calibrate_grids

CALIBRATION_FILE = "calibration.json"  # in runs/
WIDENED = "widened"  # runs/widened/: the sweeps of the added points
LOSS_FIELD = "final_mean"  # the summaries' field the loss equals (C1's verdict statistic)
LOSS = "mean over seeds of the final relative sub-optimality (C1's verdict statistic)"
ROW_FIELDS = ("objective", "rel_subopt", "step_sizes", "grad_norms", "safeguard_fraction", "zero_grad_steps", "x_final")

Point = tuple[str, float]  # (rule, its parameter)


def grid_loss(finals: Sequence[float]) -> float:
    """One grid point's loss from its final relative sub-optimality per seed (in seed order): their mean."""
    return float(np.asarray(finals, dtype=float).mean())


def widen(grids: Mapping[str, Sequence[float]], known: Mapping[Point, float],
          run_points: Callable[[list[Point]], list[float]]) -> dict[str, GridResult]:
    """calibrate_grids on `grids` (rule -> initial grid): a point's loss is taken from `known` (the main sweeps)
    where it is there, and every other point is run by `run_points` (new sweeps), round by round."""

    def evaluate(pending: list[Point]) -> list[float]:
        new = [point for point in pending if point not in known]
        ran = dict(zip(new, run_points(new), strict=True)) if new else {}
        return [known[point] if point in known else ran[point] for point in pending]

    return calibrate_grids(grids, evaluate, max_extensions=MAX_EXTENSIONS)


def added_points(result: GridResult) -> list[float]:
    """The points the rule added to the initial grid (ascending)."""
    return [value for value in result.losses if value not in result.initial]


def record(results: Mapping[str, GridResult], labels: Mapping[Point, str], seeds: int) -> dict:
    """The calibration of one problem as JSON: per rule the full grid with each point's loss, the initial grid,
    the pick (`best_lr`: the rule's parameter), `at_edge` / `edge`, the extensions, and the added runs' labels."""
    return {"loss": LOSS, "seeds": seeds,
            "rules": {rule: result.to_json() | {"added_runs": [labels[rule, v] for v in added_points(result)]}
                      for rule, result in results.items()}}


def metrics(results: Mapping[str, GridResult], problem: str) -> dict[str, float]:
    """Flat numbers for MLflow, `calibration.{problem}.{rule}.` + lr_grid's names ("lr" is the rule's parameter,
    gamma or gamma_b; "val_loss" is the loss above)."""
    flat = {}
    for rule, result in results.items():
        flat |= result.metrics(f"calibration.{problem}.{rule}")
    return flat


def added_labels(problem_record: Mapping | None) -> list[str]:
    """The labels of every added run of a problem's record (none when the problem is not calibrated)."""
    return [label for rule in (problem_record or {}).get("rules", {}).values() for label in rule["added_runs"]]


def merge_runs(run: dict, extras: list[dict]) -> dict:
    """One seed's main sweep with the one-method sweeps of the added points, as one sweep: each added row sits
    among its rule's rows in parameter order, every other row keeps its place and its numbers."""
    if not extras:
        return run
    for extra in extras:
        if not np.array_equal(extra["trace_steps"], run["trace_steps"]) or extra["sampling_seed"] != run["sampling_seed"]:
            raise ValueError(f"widened run {extra['labels']}: other trace steps or sample indices than its main sweep")
    methods = run["methods"] + [m for extra in extras for m in extra["methods"]]
    widened = {m["rule"] for extra in extras for m in extra["methods"]}
    first = {}
    for i, m in enumerate(methods):
        first.setdefault(m["rule"], i)
    order = sorted(range(len(methods)), key=lambda i: (first[methods[i]["rule"]],
                                                        methods[i]["param"] if methods[i]["rule"] in widened else 0.0, i))
    labels = run["labels"] + [label for extra in extras for label in extra["labels"]]
    rows = {field: np.concatenate([run[field], *(extra[field] for extra in extras)])[order] for field in ROW_FIELDS}
    return run | rows | {"methods": [methods[i] for i in order], "labels": [labels[i] for i in order],
                         "wall_time_s": run["wall_time_s"] + sum(extra["wall_time_s"] for extra in extras)}
