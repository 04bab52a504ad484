"""Summaries of the three testbeds for the claims and plots (medians over inits, means over seeds), with the
per-unit values the claims' intervals resample: per-init excess curves (`curves`, kept out of summary.json) and
finals, per-init condition numbers, per-seed test-loss curves at each method's best point (chosen on the
validation windows: the test windows never choose anything), the timing repeats' ratios."""
from __future__ import annotations

import math

import numpy as np

from .params import Params

C1_FROM_STEP = 30  # C1 compares the median curves from this step on (spec §6.4)
ROBUST_WITHIN = 0.02  # the robustness view: grid points within 2% of the method's best final eval loss


def best_points(runs: list[dict]) -> dict[str, tuple[float, float]]:
    """method -> (lr, scale) of its lowest final validation loss over the seed-0 grid (ties: the first of the
    grid)."""
    best = {}
    for run in runs:
        if run.get("seed_index", 0) == 0 and math.isfinite(run["final_eval"]):
            if run["method"] not in best or run["final_eval"] < best[run["method"]][0]:
                best[run["method"]] = (run["final_eval"], run["lr"], run["scale"])
    return {m: (lr, scale) for m, (_, lr, scale) in best.items()}


def runs_by_key(runs: list[dict]) -> dict[str, list[dict]]:
    """optimizer.method -> its runs in init order: every method starts from the same inits, so the i-th runs of two
    methods are a pair (C1's units)."""
    groups = {}
    for run in sorted(runs, key=lambda r: r["init"]):
        groups.setdefault(f"{run['optimizer']}.{run['method']}", []).append(run)
    return groups


def per_init_curves(runs: list[dict]) -> dict[str, list[list[float]]]:
    """optimizer.method -> its excess-loss curves in init order."""
    return {key: [r["excess"] for r in mine] for key, mine in runs_by_key(runs).items()}


def summarize_synthetic(runs: list[dict]) -> dict:
    out = {}
    for key, mine in runs_by_key(runs).items():
        curves = np.array([r["excess"] for r in mine])
        out[key] = {"median_curve": np.median(curves, 0).tolist(), "final_median": float(np.median(curves[:, -1])),
                    "finals": curves[:, -1].tolist(), "lrs": [r["lr"] for r in mine]}
    return out


def summarize_conditioning(conditioning: dict) -> dict:
    out = {"kappa_closed_form": conditioning["kappa_closed_form"]}
    for method in ("lora", "balora"):
        rows = [r for r in conditioning["rows"] if r["method"] == method]
        out[method] = {"kappa": [r["kappa"] for r in rows], "kappa_median": float(np.median([r["kappa"] for r in rows])),
                       "gap_over_A_sq_max": max(r["gap"] / r["A_norm_sq"] for r in rows),
                       "excess_median": float(np.median([r["excess"] for r in rows]))}
    return out


def summarize_finetuning(params: Params, runs: list[dict]) -> dict:
    best = best_points(runs)
    out = {}
    for method in params.finetune.methods:
        at_best = sorted((r for r in runs if r["method"] == method and (r["lr"], r["scale"]) == best[method]),
                         key=lambda r: r["seed_index"])
        steps = [s for s, _ in at_best[0]["test_evals"]]
        curves = seed_curves(at_best, steps)
        complete = [c for c in curves if math.isfinite(c[-1])]  # the plotted mean leaves out a diverged seed
        grid = [r for r in runs if r["method"] == method and r["seed_index"] == 0]
        best_value = min(r["final_test"] for r in grid)
        changes = [r["left_change_median"] for r in at_best if r["left_change_median"] is not None]
        out[method] = {"lr": best[method][0], "scale": best[method][1], "seeds": len(at_best),
                       "final_mean": float(np.mean([r["final_test"] for r in at_best])),
                       "val_final_mean": float(np.mean([r["final_eval"] for r in at_best])),
                       "steps": steps, "mean_curve": np.mean(complete or curves, axis=0).tolist(), "seed_curves": curves,
                       "median_step_s": float(np.median([t for r in runs if r["method"] == method
                                                         for t in r["step_times"]])),
                       "left_change_median": float(np.median(changes)) if changes else None,
                       "robust_fraction": float(np.mean([r["final_test"] <= (1 + ROBUST_WITHIN) * best_value
                                                         for r in grid])),
                       "grid": [{"lr": r["lr"], "scale": r["scale"], "final_val": r["final_eval"],
                                 "final_test": r["final_test"]} for r in grid]}
    return out


def seed_curves(at_best: list[dict], steps: list[int]) -> list[list[float]]:
    """The test-loss curves of a method's seeds at its best point, in seed order (seed k gives every method the same
    init and batches: C3's pairs); a run that diverged stays at inf from its divergence on."""
    return [[v for _, v in r["test_evals"]] + [math.inf] * (len(steps) - len(r["test_evals"])) for r in at_best]


def steps_to_reach(steps: list[int], curve: list[float], target: float) -> int | None:
    """The first evaluated step whose loss is <= target (None if never)."""
    return next((s for s, v in zip(steps, curve) if v <= target), None)


def summarize_timing(timing: dict) -> dict:
    """Per BaLoRA variant: its step-time ratio to LoRA's and its projection's share of its step, one per repeat."""
    repeats = timing["repeats"]
    variants = list(repeats[0]["ratios"])
    return {"model": timing["model"], "base_parameters": timing["base_parameters"], "batch": timing["batch"],
            "steps": repeats[0]["steps"], "repeats": len(repeats),
            "ratios": {m: [r["ratios"][m] for r in repeats] for m in variants},
            "projection_shares": {m: [r["projection_share"][m] for r in repeats] for m in variants},
            "median_step_s": {m: [r["median_step_s"][m] for r in repeats] for m in repeats[0]["median_step_s"]},
            "median_projection_s": {m: [r["median_projection_s_by_method"][m] for r in repeats] for m in variants}}


def summarize(params: Params, synthetic: list[dict], conditioning: dict, finetuning: list[dict], timing: dict) -> dict:
    A, B, C = summarize_synthetic(synthetic), summarize_conditioning(conditioning), summarize_finetuning(params, finetuning)
    flat = {f"A.{key}.final_median": row["final_median"] for key, row in A.items()}
    flat |= {f"B.{m}.kappa_median": B[m]["kappa_median"] for m in ("lora", "balora")}
    flat |= {f"C.{m}.{field}": row[field] for m, row in C.items()
             for field in ("final_mean", "val_final_mean", "median_step_s", "robust_fraction", "lr", "scale")}
    timing = summarize_timing(timing)
    flat |= {f"C4.{m}.step_ratio_median": float(np.median(ratios)) for m, ratios in timing["ratios"].items()}
    flat |= {f"C4.{m}.projection_share_median": float(np.median(shares))
             for m, shares in timing["projection_shares"].items()}
    return {"A": A, "B": B, "C": C, "timing": timing, "flat": flat, "c1_from_step": C1_FROM_STEP,
            "curves": per_init_curves(synthetic)}
