"""The claim checks on hand-made curves: C3's speed and peak rules, its inconclusive cases, C2, C4."""
from __future__ import annotations

from flows.lambda_grpo.claims import claim_c2, claim_c3, claim_c4


def runs(curve: list[float], method: str, seeds: int = 2, step_s: float = 0.1) -> list[dict]:
    evals = [{"step": 10 * i, "greedy": v, "sampled": v} for i, v in enumerate(curve)]
    steps = [{"wall_time_s": step_s, "groups": 4, "nontrivial_groups": 3}] * 5
    return [{"method": method, "seed_index": k, "evals": evals, "steps": steps, "test_at_best": curve[-1]}
            for k in range(seeds)]


def test_c3_rules():
    grpo = runs([0.2, 0.3, 0.4, 0.5, 0.6], "grpo")  # A* 0.6, level 0.57: reached at step 40
    fast = runs([0.2, 0.5, 0.6, 0.6, 0.6], "lambda_grpo")  # at step 20: ratio 0.5
    c3 = claim_c3({"grpo": grpo, "lambda_grpo": fast}, True, True)
    assert c3.passed and c3.ours == 0.5 and c3.details["seeds_lambda_auc_larger"] == 2
    lower = runs([0.2, 0.55, 0.58, 0.58, 0.58], "lambda_grpo")  # fast but its peak is below A* - 0.01
    assert claim_c3({"grpo": grpo, "lambda_grpo": lower}, True, True).passed is False
    never = runs([0.2, 0.2, 0.2, 0.2, 0.2], "lambda_grpo")
    assert claim_c3({"grpo": grpo, "lambda_grpo": never}, True, True).passed is False
    flat = runs([0.6, 0.6, 0.6, 0.6, 0.6], "grpo")  # no rise: inconclusive, decided before any run
    assert claim_c3({"grpo": flat, "lambda_grpo": fast}, True, True).passed is None
    assert claim_c3({"grpo": grpo, "lambda_grpo": fast}, False, True).passed is None  # precondition not met
    assert claim_c3({"grpo": grpo, "lambda_grpo": fast}, True, False).passed is None  # smoke


def test_c2_c4():
    all_runs = runs([0.1], "grpo") + runs([0.1], "lambda_grpo")
    c2 = claim_c2(all_runs, True)
    assert c2.ours == 0.75 and c2.passed is False
    c4 = claim_c4({"grpo": runs([0.1], "grpo"), "lambda_grpo": runs([0.1], "lambda_grpo", step_s=0.105)}, True)
    assert abs(c4.ours - 1.05) < 1e-12 and c4.passed
