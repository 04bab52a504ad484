"""The S-Adam claim checks (spec s_adam §6 THE CLAIM CHECK) on finished runs.

A run is a dict: task, optimizer, seed, and either `epochs` (digits: rows with test_accuracy,
mean_damp, ...) or `chattering` / `final_distance` / `mean_damp` (ns-rosenbrock). Every optimizer of a
seed starts from the same network and sees the same split and batches, so each claim compares medians over
seeds and is decided on a paired bootstrap over seeds (tasks.core.claims); a claim with two conditions is
decided on the worse of them, on one scale (percentage points).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tasks.core.claims import Claim, Gate, Verdict, bootstrap_interval, decide, median_of, not_run, on_interval
from tasks.core.seeding import derive_seed

PAPER_GAINS = "up to +6 pp (CIFAR-100 QAT), +3 pp (TinyImageNet)"


def volatility(accuracies: list[float], last: int) -> float:
    """Population std of the test accuracy over the last `last` epochs (all epochs if fewer)."""
    return float(np.std(accuracies[-last:]))


def run_summary(run: dict, volatility_epochs: int) -> dict:
    """The numbers the claims compare, for one run."""
    summary = {key: run[key] for key in ("task", "optimizer", "seed")}
    if "epochs" in run:
        accuracies = [row["test_accuracy"] for row in run["epochs"]]
        damps = [row["mean_damp"] for row in run["epochs"] if row.get("mean_damp") is not None]
        summary |= {"final_accuracy": accuracies[-1], "final_test_loss": run["epochs"][-1]["test_loss"],
                    "volatility": volatility(accuracies, volatility_epochs),
                    "mean_damp": float(np.mean(damps)) if damps else None,
                    "wall_time_s": float(sum(row["wall_time_s"] for row in run["epochs"]))}
    else:
        summary |= {key: run[key] for key in ("chattering", "final_distance", "mean_damp", "wall_time_s")}
    return summary


def medians(summaries: list[dict]) -> dict[tuple[str, str], dict]:
    """(task, optimizer) -> median over seeds of every numeric field (None where a field is absent)."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for s in summaries:
        groups.setdefault((s["task"], s["optimizer"]), []).append(s)
    table = {}
    for key, rows in groups.items():
        fields = [f for f in rows[0] if f not in ("task", "optimizer", "seed")]
        table[key] = {f: (median_of(r[f] for r in rows) if all(r[f] is not None for r in rows) else None)
                      for f in fields} | {"seeds": len(rows)}
    return table


def largest_difference(summaries: list[dict], first: str, second: str, field: str) -> float:
    """Largest |first - second| of `field` over the (task, seed) pairs both optimizers ran."""
    values = {(s["task"], s["seed"], s["optimizer"]): s[field] for s in summaries if field in s}
    pairs = [(v, values[t, seed, second]) for (t, seed, o), v in values.items() if o == first and (t, seed, second) in values]
    return float(max(abs(a - b) for a, b in pairs)) if pairs else float("nan")


def pp(value: float) -> float:
    """A fraction in percentage points, rounded to 3 decimals."""
    return round(100 * value, 3)


def paired_rows(summaries: list[dict], task: str, columns: list[tuple[str, str]]) -> dict[int, list[float]]:
    """seed -> [summary[field] of `optimizer` for each (optimizer, field) column] on `task`, for the seeds where
    every column's optimizer ran: one row per seed of a paired bootstrap."""
    found = {(s["seed"], s["optimizer"]): s for s in summaries if s["task"] == task}
    seeds = sorted({seed for seed, _ in found})
    return {seed: [found[seed, name][field] for name, field in columns] for seed in seeds
            if all((seed, name) in found for name, _ in columns)}


def on_seeds(rows: dict[int, list[float]], statistic: Callable[[np.ndarray], float], gate: Gate, claim_id: str) -> Verdict:
    """The claim's verdict on a paired bootstrap of `statistic` over the seeds' rows (a fixed seed per claim)."""
    if len(rows) < 2:
        return not_run(f"{len(rows)} seed(s) with every run: a paired bootstrap needs at least 2")
    interval = bootstrap_interval([list(rows.values())], statistic, derive_seed(0, "bootstrap", claim_id), "seeds")
    return on_interval(interval, gate)


def qat_margin(rows: np.ndarray) -> float:
    """Percentage points of median S-Adam minus the better of median AdamW and median Prox-SGD; rows: seeds x
    (S-Adam, AdamW, Prox-SGD) final accuracy."""
    sadam, adamw, prox = np.median(rows, axis=0)
    return float(100 * min(sadam - adamw, sadam - prox))  # unrounded: a rounded -0.0 would pass the gate


def noisy_margin(rows: np.ndarray) -> float:
    """Percentage points, the smaller of S-Adam's accuracy gain over AdamW and its volatility drop below AdamW's
    (both medians); rows: seeds x (S-Adam accuracy, AdamW accuracy, S-Adam volatility, AdamW volatility)."""
    accuracy, adamw_accuracy, volatility, adamw_volatility = np.median(rows, axis=0)
    return float(100 * min(accuracy - adamw_accuracy, adamw_volatility - volatility))


def chattering_ratio_of(rows: np.ndarray) -> float:
    """Median S-Adam sign changes over median AdamW's (at least 1); rows: seeds x (S-Adam, AdamW)."""
    sadam, adamw = np.median(rows, axis=0)
    return float(sadam / max(adamw, 1.0))


def _point(rows: dict[int, list[float]], statistic: Callable[[np.ndarray], float]) -> float | None:
    return statistic(np.array(list(rows.values()))) if rows else None


def claims(summaries: list[dict], *, qat_task: str, noisy_task: str, rosenbrock_task: str, chattering_ratio: float,
           deciding: bool, controls: dict[str, dict] | None = None) -> list[Claim]:
    """C1 QAT accuracy, C2 noisy small-batch accuracy and volatility, C3 chattering on the ridge, from the per-run
    summaries (run_summary). `controls`: task -> the controls' numbers for that setting (controls.py), shown in C1's
    and C2's details under "controls"; they never change the verdict."""
    controls = controls or {}
    table = medians(summaries)

    qat = {opt: table[qat_task, opt] for opt in ("sadam", "adamw", "prox_sgd")}
    qat_rows = paired_rows(summaries, qat_task, [(opt, "final_accuracy") for opt in qat])
    c1 = Claim("C1", f"QAT ({qat_task}): median final test accuracy of S-Adam >= AdamW and >= Prox-SGD",
               PAPER_GAINS, _point(qat_rows, qat_margin), 0.0,
               decide(lambda: on_seeds(qat_rows, qat_margin, Gate(low=0.0), "C1"), deciding),
               {"setting": qat_task, "unit": "pp (S-Adam minus the better baseline)",
                "median_accuracy": {opt: row["final_accuracy"] for opt, row in qat.items()},
                "gap_vs_adamw_pp": pp(qat["sadam"]["final_accuracy"] - qat["adamw"]["final_accuracy"]),
                "gap_vs_prox_sgd_pp": pp(qat["sadam"]["final_accuracy"] - qat["prox_sgd"]["final_accuracy"]),
                "n_seeds": len(qat_rows), "per_seed_accuracy": {seed: dict(zip(qat, row)) for seed, row in qat_rows.items()},
                "sadam_mean_damp": qat["sadam"]["mean_damp"], "controls": controls.get(qat_task, {})})

    noisy = {opt: table[noisy_task, opt] for opt in ("sadam", "adamw")}
    noisy_columns = [(opt, field) for field in ("final_accuracy", "volatility") for opt in noisy]
    noisy_rows = paired_rows(summaries, noisy_task, noisy_columns)
    c2 = Claim("C2", f"small batch, noisy labels ({noisy_task}): median final accuracy S-Adam >= AdamW and "
                     "volatility (std of test accuracy, last epochs) S-Adam <= AdamW (the smaller margin, pp, >= 0)",
               "better in small-batch / high-volatility transfer training", _point(noisy_rows, noisy_margin), 0.0,
               decide(lambda: on_seeds(noisy_rows, noisy_margin, Gate(low=0.0), "C2"), deciding),
               {"setting": noisy_task, "unit": "pp (the smaller of S-Adam's accuracy gain and volatility drop vs AdamW)",
                "median_accuracy": {opt: row["final_accuracy"] for opt, row in noisy.items()},
                "median_volatility": {opt: row["volatility"] for opt, row in noisy.items()},
                "accuracy_gain_pp": pp(noisy["sadam"]["final_accuracy"] - noisy["adamw"]["final_accuracy"]),
                "volatility_drop_pp": pp(noisy["adamw"]["volatility"] - noisy["sadam"]["volatility"]),
                "n_seeds": len(noisy_rows),
                "per_seed": {seed: {f"{opt}.{field}": value for (opt, field), value in zip(noisy_columns, row)}
                             for seed, row in noisy_rows.items()},
                "sadam_mean_damp": noisy["sadam"]["mean_damp"], "controls": controls.get(noisy_task, {})})

    ridge = {opt: table[rosenbrock_task, opt] for opt in ("sadam", "adamw")}
    ridge_rows = paired_rows(summaries, rosenbrock_task, [(opt, "chattering") for opt in ridge])
    c3 = Claim("C3", f"chattering on the nonsmooth ridge ({rosenbrock_task}): median sign changes of y - x^2, "
                     f"S-Adam <= {chattering_ratio} x AdamW",
               "less gradient chattering near kinks", _point(ridge_rows, chattering_ratio_of), chattering_ratio,
               decide(lambda: on_seeds(ridge_rows, chattering_ratio_of, Gate(high=chattering_ratio), "C3"), deciding),
               {"setting": rosenbrock_task, "median_sign_changes": {o: r["chattering"] for o, r in ridge.items()},
                "n_seeds": len(ridge_rows),
                "per_seed_sign_changes": {seed: dict(zip(ridge, row)) for seed, row in ridge_rows.items()},
                "median_final_distance_to_optimum": {o: r["final_distance"] for o, r in ridge.items()},
                "sadam_mean_damp": ridge["sadam"]["mean_damp"]})
    return [c1, c2, c3]
