"""The S-Adam claim checks (spec s_adam §6 THE CLAIM CHECK) on finished runs.

A run is a dict: task, optimizer, seed, and either `epochs` (digits: rows with test_accuracy,
mean_damp, ...) or `chattering` / `final_distance` / `mean_damp` (ns-rosenbrock).
"""
from __future__ import annotations

import numpy as np

from tasks.core.claims import Claim, decided, median_of

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


def claims(table: dict[tuple[str, str], dict], *, qat_task: str, noisy_task: str, rosenbrock_task: str,
           chattering_ratio: float, decide: bool, controls: dict[str, dict] | None = None) -> list[Claim]:
    """C1 QAT accuracy, C2 noisy small-batch accuracy and volatility, C3 chattering on the ridge.
    `controls`: task -> the controls' numbers for that setting (controls.py), shown in C1's and C2's details
    under "controls"; they never change `passed`."""
    controls = controls or {}
    qat = {opt: table[qat_task, opt] for opt in ("sadam", "adamw", "prox_sgd")}
    gap_adamw = qat["sadam"]["final_accuracy"] - qat["adamw"]["final_accuracy"]
    gap_prox = qat["sadam"]["final_accuracy"] - qat["prox_sgd"]["final_accuracy"]
    c1 = Claim("C1", f"QAT ({qat_task}): median final test accuracy of S-Adam >= AdamW and >= Prox-SGD",
               PAPER_GAINS, pp(min(gap_adamw, gap_prox)), 0.0, decided(gap_adamw >= 0 and gap_prox >= 0, decide),
               {"setting": qat_task, "unit": "pp (S-Adam minus the better baseline)",
                "median_accuracy": {opt: row["final_accuracy"] for opt, row in qat.items()},
                "gap_vs_adamw_pp": pp(gap_adamw), "gap_vs_prox_sgd_pp": pp(gap_prox),
                "sadam_mean_damp": qat["sadam"]["mean_damp"], "controls": controls.get(qat_task, {})})

    noisy = {opt: table[noisy_task, opt] for opt in ("sadam", "adamw")}
    gap = noisy["sadam"]["final_accuracy"] - noisy["adamw"]["final_accuracy"]
    calmer = noisy["sadam"]["volatility"] <= noisy["adamw"]["volatility"]
    c2 = Claim("C2", f"small batch, noisy labels ({noisy_task}): median final accuracy S-Adam >= AdamW and "
                     "volatility (std of test accuracy, last epochs) S-Adam <= AdamW",
               "better in small-batch / high-volatility transfer training", pp(gap), 0.0,
               decided(gap >= 0 and calmer, decide),
               {"setting": noisy_task, "unit": "pp (S-Adam minus AdamW)",
                "median_accuracy": {opt: row["final_accuracy"] for opt, row in noisy.items()},
                "median_volatility": {opt: row["volatility"] for opt, row in noisy.items()},
                "sadam_mean_damp": noisy["sadam"]["mean_damp"], "controls": controls.get(noisy_task, {})})

    ridge = {opt: table[rosenbrock_task, opt] for opt in ("sadam", "adamw")}
    ratio = ridge["sadam"]["chattering"] / max(ridge["adamw"]["chattering"], 1.0)
    c3 = Claim("C3", f"chattering on the nonsmooth ridge ({rosenbrock_task}): median sign changes of y - x^2, "
                     f"S-Adam <= {chattering_ratio} x AdamW",
               "less gradient chattering near kinks", round(ratio, 4), chattering_ratio,
               decided(ratio <= chattering_ratio, decide),
               {"setting": rosenbrock_task, "median_sign_changes": {o: r["chattering"] for o, r in ridge.items()},
                "median_final_distance_to_optimum": {o: r["final_distance"] for o, r in ridge.items()},
                "sadam_mean_damp": ridge["sadam"]["mean_damp"]})
    return [c1, c2, c3]
