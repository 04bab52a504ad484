"""The claim checks on hand-made runs, each decided on an interval over seeds: a sample that clears the gate passes,
one wholly outside fails, a noisy one near the gate is inconclusive; C3's never-reached, lower-peak, precondition
and no-rise cases; the precondition on a bootstrap over prompts; the learning-rate choice; C4 needs 9 seeds as
timing repeats; the smoke profile decides nothing."""
from __future__ import annotations

import numpy as np

from flows.lambda_grpo.claims import claim_c1, claim_c2, claim_c3, claim_c4, precondition
from flows.lambda_grpo.experiments import chosen_lr
from tasks.core.claims import Verdict

MET = Verdict("pass", "SFT beats the constant answer")
RISE, FAST = [0.2, 0.3, 0.4, 0.5, 0.6], [0.2, 0.5, 0.6, 0.6, 0.6]  # A* 0.6, level 0.57: steps 40 and 20


def runs(per_seed: list[list[float]], method: str, step_s: list[float] | None = None,
         nontrivial: list[int] | None = None) -> list[dict]:
    """One run per seed: its greedy curve (evaluated every 10 steps), step time and non-trivial groups of 100."""
    step_s = step_s or [0.1] * len(per_seed)
    nontrivial = nontrivial or [95] * len(per_seed)
    return [{"method": method, "seed_index": k, "test_at_best": curve[-1],
             "evals": [{"step": 10 * i, "greedy": v, "sampled": v} for i, v in enumerate(curve)],
             "steps": [{"wall_time_s": step_s[k], "groups": 100, "nontrivial_groups": nontrivial[k]}] * 5}
            for k, curve in enumerate(per_seed)]


def jitter(curve: list[float], seeds: int = 3, scale: float = 0.005, seed: int = 0) -> list[list[float]]:
    rng = np.random.default_rng(seed)
    return [list(np.array(curve) + rng.uniform(-scale, scale, len(curve))) for _ in range(seeds)]


def c3(grpo: list[list[float]], lam: list[list[float]], start: Verdict = MET, deciding: bool = True):
    return claim_c3({"grpo": runs(grpo, "grpo"), "lambda_grpo": runs(lam, "lambda_grpo")}, start, deciding)


def test_c1_is_an_identity():
    identity = {"grpo_vs_prm": 1e-15, "lambda_grpo_vs_prm_without_frequency": 9e-16, "groups": 50}
    assert claim_c1(identity, True).verdict.word == "pass" and claim_c1(identity, True).verdict.interval is None
    assert claim_c1(identity | {"grpo_vs_prm": 1e-3}, True).verdict.word == "fail"
    assert claim_c1(identity, False).verdict.word == "undecided"


def test_c2_fraction_on_a_t_interval_over_seeds():
    def c2(nontrivial):
        return claim_c2(runs([[0.1]] * len(nontrivial), "grpo", nontrivial=nontrivial), True)
    clear = c2([95, 96, 94])
    assert clear.verdict.word == "pass" and abs(clear.ours - 0.95) < 1e-12 and "t-interval" in clear.verdict.interval.method
    assert c2([80, 82, 81]).verdict.word == "fail"
    assert c2([85, 96, 92]).verdict.word == "inconclusive"


def test_c3_speed_and_peak_on_a_paired_bootstrap_over_seeds():
    clear = c3(jitter(RISE), jitter(FAST, seed=1))
    assert clear.verdict.word == "pass" and clear.ours == 0.5 and "paired bootstrap over 3 seeds" in clear.verdict.interval.method
    never = c3(jitter(RISE), jitter([0.2] * 5, seed=1))
    assert never.verdict.word == "fail" and never.ours is None
    lower = c3(jitter(RISE), jitter([0.2, 0.55, 0.58, 0.58, 0.58], seed=1))  # fast, but peak 0.02 below A*
    assert lower.verdict.word == "fail"


def test_c3_flat_curves_within_seed_noise_are_inconclusive():
    flat = [0.2] + [0.24] * 40  # a first rise, then flat within +-0.03 per seed: ratio 2 on the mean curves
    found = c3(jitter(flat, scale=0.03, seed=0), jitter(flat, scale=0.03, seed=1))
    assert found.ours == 2.0 and found.verdict.word == "inconclusive", found.verdict.reason
    assert "speed: the 95% interval" in found.verdict.reason


def test_c3_is_inconclusive_without_a_rise_or_its_precondition_and_undecided_in_smoke():
    assert c3(jitter([0.6] * 5), jitter(FAST)).verdict.word == "inconclusive"  # GRPO at its peak at step 0
    assert c3(jitter(RISE), jitter(FAST), start=Verdict("fail", "margin")).verdict.word == "inconclusive"
    assert c3(jitter(RISE), jitter(FAST), deciding=False).verdict.word == "undecided"


def test_c4_needs_nine_seeds_as_timing_repeats():
    def c4(grpo_s, lam_s):
        curves = [[0.1]] * len(grpo_s)
        return claim_c4({"grpo": runs(curves, "grpo", grpo_s), "lambda_grpo": runs(curves, "lambda_grpo", lam_s)}, True)
    three = c4([0.1] * 3, [0.102] * 3)
    assert three.verdict.word == "inconclusive" and "fewer than 9 repeats" in three.verdict.reason
    grpo = list(np.linspace(0.09, 0.11, 9))
    assert c4(grpo, [g * 1.02 for g in grpo]).verdict.word == "pass"
    assert c4(grpo, [g * 1.3 for g in grpo]).verdict.word == "fail"
    around = [1.0, 1.2, 1.05, 1.15, 1.08, 1.12, 1.1, 1.02, 1.18]
    assert c4(grpo, [g * r for g, r in zip(grpo, around)]).verdict.word == "inconclusive"
    assert abs(c4(grpo, [g * 1.02 for g in grpo]).ours - 1.02) < 1e-12


def sft_rows(accuracies: list[float], prompts: int = 256, seed: int = 0) -> list[dict]:
    """One SFT row per seed: greedy rewards on `prompts` validation prompts at the given accuracy."""
    rng = np.random.default_rng(seed)
    return [{"greedy_val_rewards": list((rng.random(prompts) < a).astype(float))} for a in accuracies]


def constant(rate: float, prompts: int = 256) -> dict:
    return {"answer": 0, "val_rewards": [float(i < rate * prompts) for i in range(prompts)]}


def test_precondition_needs_a_margin_over_the_constant_answer_and_room_to_rise():
    clear = precondition(sft_rows([0.5, 0.55, 0.45]), constant(0.2))
    assert clear.word == "pass" and "validation prompts" in clear.interval.method
    assert precondition(sft_rows([0.22, 0.24, 0.25]), constant(0.2)).word == "fail"  # the 400-step policy
    near = precondition(sft_rows([0.31, 0.30, 0.30]), constant(0.2))  # margin 0.1: the interval straddles it
    assert near.word == "inconclusive" and "margin over the constant answer" in near.reason
    assert precondition(sft_rows([0.95, 0.96, 0.94]), constant(0.2)).word == "fail"  # no room to rise
    blocked = c3(jitter(RISE), jitter(FAST), start=near)
    assert blocked.verdict.word == "inconclusive" and "precondition not met (inconclusive)" in blocked.verdict.reason


def test_the_learning_rate_is_chosen_on_both_methods_mean_tune_accuracy_after_step_0():
    def run(lr, method, curve):
        return {"lr": lr, "method": method, "evals": [{"greedy": v} for v in curve]}
    runs = [run(1e-4, "grpo", [0.9, 0.3, 0.3]), run(1e-4, "lambda_grpo", [0.9, 0.3, 0.3]),
            run(1e-3, "grpo", [0.2, 0.6, 0.5]), run(1e-3, "lambda_grpo", [0.2, 0.2, 0.3]),
            run(3e-3, "grpo", [0.2, 0.1, 0.1]), run(3e-3, "lambda_grpo", [0.2, 0.7, 0.8])]
    lr, scores = chosen_lr(runs)
    assert lr == 3e-3 and abs(scores[1e-3] - 0.4) < 1e-12 and abs(scores[1e-4] - 0.3) < 1e-12  # step 0 not counted
    tied = chosen_lr([run(1e-3, m, [0, 0.5]) for m in ("grpo", "lambda_grpo")]
                     + [run(1e-4, m, [0, 0.5]) for m in ("grpo", "lambda_grpo")])
    assert tied[0] == 1e-4  # ties: the smaller rate
