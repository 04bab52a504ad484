"""C1-C4 decided on intervals over their units: per claim, a sample that clears the gate passes, one wholly outside
fails, a noisy one near the gate is inconclusive; a target never reached fails; every BaLoRA variant gets its own
C3 verdict while the claim's is the paper's (svd) variant's; C4 needs 9 timing repeats and reports the projection's
share of a step; the smoke profile leaves every claim undecided."""
from __future__ import annotations

import numpy as np
import pytest

from flows.balora.claims import c1, c2, c3, c4, claims, on_timings
from flows.balora.summaries import seed_curves
from tasks.core.claims import Gate

INITS, STEPS, BUDGET = 8, 41, 80
EVAL_STEPS = [0, 10, 20, 30, 40, 50, 60, 70, 80]


def decaying(finals) -> list[list[float]]:
    """One excess-loss curve per init, from 100 down to its final value."""
    return [np.geomspace(100.0, final, STEPS).tolist() for final in finals]


def timing_summary(ratios: list[float], shares: list[float]) -> dict:
    """summaries.summarize_timing's shape: per BaLoRA variant one ratio and one projection share per repeat."""
    return {"model": {"d_model": 256, "n_layers": 4, "n_heads": 4, "context": 64}, "base_parameters": 3_200_000,
            "batch": 8, "steps": 10, "repeats": len(ratios),
            "ratios": {"balora": ratios, "balora_aligned": [r + 0.01 for r in ratios]},
            "projection_shares": {"balora": shares, "balora_aligned": shares},
            "median_step_s": {"lora": [0.2] * len(ratios), "balora": [0.2 * r for r in ratios]},
            "median_projection_s": {"balora": [0.003] * len(ratios), "balora_aligned": [0.004] * len(ratios)}}


def summary(lora_finals=None, balora_finals=None, kappa_lora=None, kappa_balora=None, gap=1e-15,
            lora_curves=None, balora_curves=None, aligned_curves=None, ratios=(1.05,), shares=(0.015,)) -> dict:
    """A testbed summary as summaries.summarize writes it, with only the numbers the claims read."""
    rng = np.random.default_rng(0)
    lora_finals = lora_finals if lora_finals is not None else rng.uniform(1.8, 2.4, INITS)
    balora_finals = balora_finals if balora_finals is not None else rng.uniform(0.3, 0.5, INITS)
    kappa_lora = kappa_lora if kappa_lora is not None else rng.uniform(140, 220, INITS)
    kappa_balora = kappa_balora if kappa_balora is not None else 40.0 + rng.uniform(-0.5, 0.5, INITS)
    lora_curves = lora_curves or [[3.0, 2.8, 2.7, 2.65, 2.62, 2.61, 2.60, 2.60, 2.60]] * 3
    balora_curves = balora_curves or [[3.0, 2.6] + [2.5 + d] * 7 for d in (-0.01, 0.0, 0.01)]
    curves = {"sign.lora": decaying(lora_finals), "sign.balora": decaying(balora_finals)}
    A = {key: {"final_median": float(np.median(np.array(c)[:, -1])), "finals": np.array(c)[:, -1].tolist()}
         for key, c in curves.items()}
    B = {"kappa_closed_form": 40.0,
         "lora": {"kappa": list(kappa_lora), "kappa_median": float(np.median(kappa_lora)), "gap_over_A_sq_max": 5.0,
                  "excess_median": 1e-3},
         "balora": {"kappa": list(kappa_balora), "kappa_median": float(np.median(kappa_balora)),
                    "gap_over_A_sq_max": gap, "excess_median": 1e-3}}
    methods = [("lora", lora_curves), ("balora", balora_curves)]
    methods += [] if aligned_curves is None else [("balora_aligned", aligned_curves)]
    C = {m: {"seed_curves": c, "steps": EVAL_STEPS, "final_mean": float(np.mean([x[-1] for x in c])),
             "val_final_mean": float(np.mean([x[-1] for x in c])) - 0.01, "lr": 3e-3, "scale": 1.0,
             "median_step_s": 0.01, "robust_fraction": 0.5, "left_change_median": None if m == "lora" else 0.01}
         for m, c in methods}
    return {"A": A, "B": B, "C": C, "timing": timing_summary(list(ratios), list(shares)), "curves": curves,
            "c1_from_step": 30}


def test_c1_ratio_of_median_finals_on_a_paired_bootstrap_over_inits():
    clear = c1(summary(), True)
    assert clear.verdict.word == "pass" and clear.ours < 0.3 and "paired bootstrap over 8 inits" in clear.verdict.interval.method
    lora = np.full(INITS, 2.0)
    assert c1(summary(lora_finals=lora, balora_finals=np.full(INITS, 1.8)), True).verdict.word == "fail"
    noisy = np.array([0.3, 1.7, 0.5, 1.5, 0.6, 1.4, 0.8, 1.2])  # ratios around the 0.5 gate
    assert c1(summary(lora_finals=lora, balora_finals=noisy), True).verdict.word == "inconclusive"


def test_c2_kappa_ratio_on_a_bootstrap_and_the_exact_parts():
    clear = c2(summary(), True)
    assert clear.verdict.word == "pass" and clear.ours == pytest.approx(40 / 180, rel=0.2)
    assert c2(summary(kappa_lora=np.full(INITS, 60.0)), True).verdict.word == "fail"  # ratio 0.67
    noisy = np.array([40, 160, 50, 140, 60, 120, 70, 100.0])  # ratios 0.25..1: around the 0.5 gate
    assert c2(summary(kappa_lora=noisy), True).verdict.word == "inconclusive"
    assert c2(summary(gap=1e-6), True).verdict.word == "fail"  # an exact part fails: the claim fails
    off = 40.0 * np.array([1.0, 1.0, 1.2, 1.0, 1.0, 1.0, 1.0, 1.0])  # one init 20% off the closed form
    assert c2(summary(kappa_balora=off), True).verdict.word == "fail"


def test_c3_mean_seed_difference_and_steps_to_lora_final():
    clear = c3(summary(), True, BUDGET)
    assert clear.verdict.word == "pass" and clear.ours == pytest.approx(-0.1)
    assert clear.details["variants"]["balora"]["step_fraction"] == pytest.approx(10 / BUDGET)
    higher = [[3.0, 2.9, 2.8, 2.75, 2.7, 2.7, 2.7, 2.7, 2.65 + d] for d in (0.0, 0.01, 0.02)]
    never = c3(summary(balora_curves=higher), True, BUDGET)  # above LoRA's final at every seed: never reached
    assert never.verdict.word == "fail" and never.details["variants"]["balora"]["step_fraction"] is None
    around = [[3.0] + [2.6 + d] * 8 for d in (-0.1, 0.08, -0.02)]  # per-seed differences around 0
    lora = [[3.0, 2.8, 2.7, 2.65, 2.62, 2.61, 2.60, 2.60, 2.60]] * 3
    assert c3(summary(lora_curves=lora, balora_curves=around), True, BUDGET).verdict.word == "inconclusive"


def test_a_diverged_seed_stays_at_inf_so_balora_never_reaches_lora():
    diverged = seed_curves([{"test_evals": [(0, 3.0), (10, 2.5), (13, float("inf"))]}], [0, 10, 20, 30])
    assert diverged == [[3.0, 2.5, float("inf"), float("inf")]]
    steady = [[3.0, 2.5, 2.4, 2.3]] * 2
    found = c3(summary(lora_curves=steady + steady[:1], balora_curves=steady + diverged), True, 30)
    assert found.verdict.word == "fail" and found.ours is None and found.details["variants"]["balora"]["step_fraction"] is None
    assert "diverged" in found.verdict.reason


def test_c3_decides_every_variant_and_stands_on_the_papers():
    """The aligned variant ends above LoRA (fail) while the svd variant ends below (pass): the claim is the svd
    variant's verdict, the aligned one is decided alike beside it."""
    above = [[3.0, 2.9, 2.8, 2.75, 2.7, 2.7, 2.7, 2.7, 2.65 + d] for d in (0.0, 0.01, 0.02)]
    found = c3(summary(aligned_curves=above), True, BUDGET)
    assert found.verdict.word == "pass" and found.details["paper_variant"] == "balora"
    variants = found.details["variants"]
    assert set(variants) == {"balora", "balora_aligned"}
    assert variants["balora"]["verdict"] == "pass" and variants["balora_aligned"]["verdict"] == "fail"
    assert variants["balora_aligned"]["final_difference_mean"] == pytest.approx(0.06)
    assert variants["balora"]["interval"][1] < 0 < variants["balora_aligned"]["interval"][0]
    assert variants["balora"]["left_change_median"] == 0.01 and variants["balora"]["final_val_mean"] < 2.5
    # the claim's numbers are the test split's, never the validation's
    assert found.details["lora_final_test_mean"] == pytest.approx(2.6)


def test_c4_nine_repeats_decide_and_the_projection_share_is_reported():
    one = c4(summary(ratios=(1.152,)), True)
    assert one.verdict.word == "inconclusive" and "fewer than 9 repeats" in one.verdict.reason
    nine = c4(summary(ratios=(1.01, 1.02, 0.99, 1.03, 1.0, 1.02, 1.01, 0.98, 1.04), shares=(0.01,) * 9), True)
    assert nine.verdict.word == "pass" and nine.verdict.interval.n == 9 and nine.ours == pytest.approx(1.01)
    assert nine.details["projection_share_of_step"] == pytest.approx(0.01)
    assert nine.details["ratio_median_by_variant"]["balora_aligned"] == pytest.approx(1.02)
    slow = c4(summary(ratios=(1.3, 1.25, 1.28, 1.4, 1.22, 1.3, 1.27, 1.35, 1.26)), True)
    assert slow.verdict.word == "fail"
    assert "d256" in nine.statement and "9 repeats" in nine.statement
    gate = Gate(high=1.15)
    assert on_timings([1.05, 1.06, 1.04, 1.07, 1.05, 1.08, 1.03, 1.06, 1.05], gate, "runs").word == "pass"
    assert on_timings([1.25, 1.26, 1.24, 1.27, 1.25, 1.28, 1.23, 1.26, 1.25], gate, "runs").word == "fail"
    assert on_timings([1.06, 1.38, 1.12, 1.15, 1.09, 1.21, 1.149, 1.17, 1.11, 1.3, 1.14, 1.16], gate,
                      "runs").word == "inconclusive"


def test_the_smoke_profile_decides_nothing():
    assert {c.verdict.word for c in claims(summary(), False, BUDGET)} == {"undecided"}


def test_the_best_point_is_chosen_on_validation_and_reported_on_test():
    """Two grid points whose validation and test losses disagree: the point of lower validation loss is chosen,
    and its test loss (not its validation loss) is what the summary reports."""
    from types import SimpleNamespace

    from flows.balora.summaries import summarize_finetuning

    def row(method, lr, val, test, k=0):
        return {"method": method, "lr": lr, "scale": 1.0, "seed_index": k, "evals": [(0, 3.0), (10, val)],
                "final_eval": val, "test_evals": [(0, 3.1), (10, test)], "final_test": test, "step_times": [0.01],
                "left_change_median": None if method == "lora" else 0.02}

    runs = [row(m, 1e-3, 2.50, 2.70) for m in ("lora", "balora")] + [row(m, 1e-2, 2.60, 2.40) for m in ("lora", "balora")]
    runs += [row(m, 1e-3, 2.52, 2.72, k=1) for m in ("lora", "balora")]
    params = SimpleNamespace(finetune=SimpleNamespace(methods=["lora", "balora"]))
    C = summarize_finetuning(params, runs)
    assert C["balora"]["lr"] == 1e-3 and C["balora"]["seeds"] == 2  # lower validation loss, though higher test loss
    assert C["balora"]["final_mean"] == pytest.approx(2.71) and C["balora"]["val_final_mean"] == pytest.approx(2.51)
    assert C["balora"]["seed_curves"] == [[3.1, 2.70], [3.1, 2.72]]
    assert C["balora"]["left_change_median"] == pytest.approx(0.02) and C["lora"]["left_change_median"] is None
    assert C["lora"]["robust_fraction"] == 0.5  # on the test losses: 2.70 is not within 2% of 2.40
