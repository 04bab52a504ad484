"""UniDrag part 1 checks: dataset summary and the solver-validation claims V1-V3 (spec §6.1, §8, §10).

V1 Schafer-Turek 2D-1 Cd within cd_tolerance of 5.5795, V2 recirculation length within
recirculation_tolerance of 0.0846 (both at the profile's resolution; decided at D = 10, the
tolerances of spec §10's fast variant; exact: one deterministic run against a reference value), V3 the data set has
no non-finite value (exact: a count) and its mean convergence drift |Cd(last window) - Cd(previous window)| / Cd is
below max_drift (spec §6.1: the window-mean Cd settles within ~1.5% after 3 passages; on a bootstrap over the shapes).
"""
from __future__ import annotations

import numpy as np

from tasks.cfd.vehicles import BODY_TYPES
from tasks.core.claims import Claim, Gate, Verdict, bootstrap_interval, decide, exact, on_interval
from tasks.core.seeding import derive_seed


def dataset_metrics(rows: list[dict], wall_s: float) -> dict:
    """rows: one per shape with body_type, cd, drift, nonfinite, diverged, batch, batch_mlups, batch_wall_s."""
    batches = {r["batch"]: (r["batch_mlups"], r["batch_wall_s"]) for r in rows}
    core_seconds = sum(w for _, w in batches.values())
    drift = np.array([r["drift"] for r in rows])
    metrics = {"shapes": len(rows), "wall_time_s": wall_s,
               "mlups_per_worker": sum(m * w for m, w in batches.values()) / core_seconds,
               "lbm_core_seconds": core_seconds, "nan_count": sum(r["nonfinite"] for r in rows),
               "diverged": sum(r["diverged"] for r in rows), "drift_mean": float(drift.mean()),
               "drift_max": float(drift.max())}
    for body_type in BODY_TYPES:
        cd = np.array([r["cd"] for r in rows if r["body_type"] == body_type])
        metrics[f"cd_mean.{body_type}"], metrics[f"cd_std.{body_type}"] = float(cd.mean()), float(cd.std())
    return metrics


def _within(value: float | None, reference: float, tolerance: float) -> tuple[float | None, bool | None]:
    if value is None or not np.isfinite(value):
        return None, False
    error = abs(value - reference) / reference
    return float(error), bool(error <= tolerance)


def drift_verdict(dataset: dict, max_drift: float, seed: int) -> Verdict:
    """V3: a non-finite value or a diverged run fails it outright (a count); else the mean drift over the shapes, on a
    bootstrap over them, against max_drift."""
    if dataset["nan_count"] or dataset["diverged"]:
        return exact(False, f"{dataset['nan_count']} non-finite values, {dataset['diverged']} diverged runs")
    drift = [row["drift"] for row in dataset["per_shape"]]
    return on_interval(bootstrap_interval([drift], np.mean, seed, "shapes"), Gate(high=max_drift))


def validation_claims(validation: dict, dataset: dict, cd_tolerance: float, recirculation_tolerance: float,
                      max_drift: float, seed: int, decide_claims: bool) -> list[Claim]:
    """V1-V3 from the Schafer-Turek result (tasks.cfd.validation) and the dataset metrics (with the per-shape rows);
    `seed`: the base of V3's bootstrap seed."""
    setting = f"D = {validation['diameter_cells']} cells, {validation['steps']} steps, {validation['bounce_back']}"
    cd_error, cd_ok = _within(validation["cd_mean"], 5.5795, cd_tolerance)
    la_error, la_ok = _within(validation["recirculation_length"], 0.0846, recirculation_tolerance)
    one_run = f"one deterministic run ({setting}) against the reference"
    return [
        Claim("V1", f"Schafer-Turek 2D-1 Cd within {cd_tolerance:.0%} of 5.5795", "5.5795 (reference)", cd_error,
              cd_tolerance, decide(lambda: exact(cd_ok, one_run), decide_claims),
              {"cd": validation["cd_mean"], "setting": setting}),
        Claim("V2", f"Schafer-Turek 2D-1 recirculation length within {recirculation_tolerance:.0%} of 0.0846",
              "0.0846 (reference)", la_error, recirculation_tolerance, decide(lambda: exact(la_ok, one_run), decide_claims),
              {"recirculation_length": validation["recirculation_length"], "setting": setting}),
        Claim("V3", f"data set has no NaN and mean convergence drift <= {max_drift:.1%}", "no NaN (spec §8)",
              dataset["drift_mean"], max_drift, decide(lambda: drift_verdict(dataset, max_drift, derive_seed(seed, "bootstrap", "V3")),
                                                          decide_claims),
              {"nan_count": dataset["nan_count"], "diverged": dataset["diverged"], "drift_max": dataset["drift_max"],
               "shapes": dataset["shapes"]}),
    ]
