"""balora claim checks C1-C4 of spec §6.4 on the testbed summaries (summaries.py)."""
from __future__ import annotations

import numpy as np

from tasks.core.claims import Claim, decided

from .summaries import steps_to_reach

# THE CLAIM CHECK (spec §6.4), fixed by the spec, not tuned
C1_RATIO, C1_BELOW_FRACTION = 0.5, 0.8
C2_RATIO, C2_CLOSED_FORM_TOL, C2_GAP_TOL = 0.5, 0.10, 1e-8
C3_STEP_FRACTION = 0.8
C4_RATIO = 1.15


def c1(summary: dict, decide: bool) -> Claim:
    lora, balora = summary["A"]["sign.lora"], summary["A"]["sign.balora"]
    start = summary["c1_from_step"]
    below = np.array(balora["median_curve"][start:]) < np.array(lora["median_curve"][start:])
    fraction = float(below.mean()) if below.size else None
    ratio = balora["final_median"] / lora["final_median"] if lora["final_median"] > 0 else None
    ok = ratio is not None and fraction is not None and ratio <= C1_RATIO and fraction >= C1_BELOW_FRACTION
    gd = summary["A"].get("gd.balora", {}).get("final_median"), summary["A"].get("gd.lora", {}).get("final_median")
    return Claim("C1", "Synthetic 20x20 r4, sign descent, per-run best lr: median final excess loss of BaLoRA <= 0.5 x "
                       "LoRA's and its median curve below LoRA's at >= 80% of the steps from step 30",
                 "Fig. 3: BaLoRA converges faster (qualitative)", ratio, C1_RATIO,
                 decided(ok, decide, ratio, fraction),
                 {"balora_final_median": balora["final_median"], "lora_final_median": lora["final_median"],
                  "fraction_below_from_step_30": fraction,
                  "aligned_final_median": summary["A"].get("sign.balora_aligned", {}).get("final_median"),
                  "gd_balora_final_median": gd[0], "gd_lora_final_median": gd[1]})


def c2(summary: dict, decide: bool) -> Claim:
    B = summary["B"]
    ratio = B["balora"]["kappa_median"] / B["lora"]["kappa_median"]
    closed = B["kappa_closed_form"]
    worst = max(abs(k - closed) / closed for k in B["balora"]["kappa"])
    ok = ratio <= C2_RATIO and worst <= C2_CLOSED_FORM_TOL and B["balora"]["gap_over_A_sq_max"] <= C2_GAP_TOL
    return Claim("C2", "Median Hessian condition number at BaLoRA's end points <= 0.5 x LoRA's; BaLoRA's within 10% of "
                       "2 s1/(s_r - s_r+1); balancing gap <= 1e-8 ||A||^2",
                 "balanced minima have the optimal condition number (theory, Fig. 6)", ratio, C2_RATIO,
                 decided(ok, decide),
                 {"kappa_median_balora": B["balora"]["kappa_median"], "kappa_median_lora": B["lora"]["kappa_median"],
                  "kappa_closed_form": closed, "balora_worst_relative_error": worst,
                  "balora_gap_over_A_sq_max": B["balora"]["gap_over_A_sq_max"],
                  "lora_gap_over_A_sq_max": B["lora"]["gap_over_A_sq_max"],
                  "excess_median_balora": B["balora"]["excess_median"], "excess_median_lora": B["lora"]["excess_median"]})


def c3(summary: dict, decide: bool, budget: int) -> Claim:
    lora, balora = summary["C"]["lora"], summary["C"]["balora"]
    reach = steps_to_reach(balora["steps"], balora["mean_curve"], lora["mean_curve"][-1])
    fraction = None if reach is None else reach / budget
    ok = balora["final_mean"] < lora["final_mean"] and fraction is not None and fraction <= C3_STEP_FRACTION
    return Claim("C3", "Tiny-LM fine-tuning, each method at its best grid point, mean over seeds: BaLoRA's final eval "
                       "loss < LoRA's, and BaLoRA reaches LoRA's final eval loss within 0.8 x the step budget",
                 "BaLoRA lower eval loss than LoRA on every task, faster convergence (values not verified)",
                 balora["final_mean"], lora["final_mean"], decided(ok, decide),  # never reaching it: a fail
                 {"balora_final_mean": balora["final_mean"], "lora_final_mean": lora["final_mean"],
                  "balora_best": {"lr": balora["lr"], "scale": balora["scale"]},
                  "lora_best": {"lr": lora["lr"], "scale": lora["scale"]}, "seeds": balora["seeds"],
                  "balora_steps_to_lora_final": reach, "step_fraction": fraction, "budget": budget,
                  "aligned_final_mean": summary["C"].get("balora_aligned", {}).get("final_mean")})


def c4(summary: dict, decide: bool) -> Claim:
    lora, balora, timing = summary["C"]["lora"], summary["C"]["balora"], summary["timing"]
    ratio = timing["ratio"]
    return Claim("C4", "Median wall time per fine-tuning step of BaLoRA <= 1.15 x LoRA's (both stepping alternately in "
                       "one process); robustness: fraction of grid points within 2% of the method's best",
                 "computationally lightweight (memory table); robust to hyperparameters", ratio, C4_RATIO,
                 decided(ratio <= C4_RATIO, decide),
                 {"balora_median_step_s": timing["median_step_s"]["balora"],
                  "lora_median_step_s": timing["median_step_s"]["lora"],
                  "balora_median_projection_s": timing["median_projection_s"], "timed_steps": timing["steps"],
                  "grid_runs_median_step_s": {"balora": balora["median_step_s"], "lora": lora["median_step_s"]},
                  "balora_robust_fraction": balora["robust_fraction"], "lora_robust_fraction": lora["robust_fraction"]})


def claims(summary: dict, decide: bool, budget: int) -> list[Claim]:
    return [c1(summary, decide), c2(summary, decide), c3(summary, decide, budget), c4(summary, decide)]
