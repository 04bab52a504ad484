"""The S-Adam claim checks (spec s_adam §6): volatility, per-run summaries, medians over seeds, C1-C3 decided on a
paired bootstrap over seeds (pass, fail, inconclusive; undecided in smoke or with one seed)."""
from __future__ import annotations

import pytest

from flows.s_adam.claims import claims, run_summary, volatility

SEEDS = range(6)
SETTINGS = dict(qat_task="qat", noisy_task="noisy", rosenbrock_task="ridge", chattering_ratio=0.8)


def test_volatility_uses_the_last_epochs():
    assert volatility([0.1, 0.9, 0.5, 0.5], last=2) == 0.0
    assert volatility([0.4, 0.6], last=10) == pytest.approx(0.1)


def digits_run(task, optimizer, seed, accuracies, damp=None):
    return {"task": task, "optimizer": optimizer, "seed": seed,
            "epochs": [{"test_accuracy": a, "test_loss": 1.0, "mean_damp": damp, "wall_time_s": 0.1} for a in accuracies]}


def ridge_run(optimizer, seed, chattering):
    return {"task": "ridge", "optimizer": optimizer, "seed": seed, "chattering": chattering, "final_distance": 1.0,
            "mean_damp": None, "wall_time_s": 0.1}


def summaries(qat_sadam: list[float], noisy_sadam: list[float], noisy_swing: list[float], ridge_sadam: list[int]) -> list[dict]:
    """Per seed: AdamW 0.90 and Prox-SGD 0.85 final QAT accuracy; on noisy labels AdamW ends at 0.80 after a swing of
    +-0.02 (volatility 0.02); AdamW 100 sign changes. S-Adam at the given per-seed numbers (noisy: final accuracy
    and half its last two epochs' swing, so volatility = swing)."""
    runs = []
    for seed in SEEDS:
        runs += [digits_run("qat", "sadam", seed, [0.5, qat_sadam[seed]], 0.3), digits_run("qat", "adamw", seed, [0.5, 0.90]),
                 digits_run("qat", "prox_sgd", seed, [0.5, 0.85]),
                 digits_run("noisy", "sadam", seed, [noisy_sadam[seed] - 2 * noisy_swing[seed], noisy_sadam[seed]], 0.2),
                 digits_run("noisy", "adamw", seed, [0.76, 0.80]),
                 ridge_run("sadam", seed, ridge_sadam[seed]), ridge_run("adamw", seed, 100)]
    return [run_summary(r, volatility_epochs=10) for r in runs]


def verdicts(rows: list[dict], deciding: bool = True) -> list[str]:
    return [c.verdict.word for c in claims(rows, deciding=deciding, **SETTINGS)]


CLEAR = ([0.93, 0.94, 0.935, 0.93, 0.94, 0.932], [0.85, 0.86, 0.855, 0.85, 0.86, 0.852], [0.005] * 6, [40, 42, 45, 41, 39, 44])
WORSE = ([0.86, 0.87, 0.865, 0.86, 0.87, 0.862], [0.70, 0.71, 0.705, 0.70, 0.71, 0.702], [0.005] * 6, [95, 97, 99, 96, 98, 94])
NOISY = ([0.86, 0.94, 0.88, 0.92, 0.90, 0.905], [0.75, 0.85, 0.78, 0.82, 0.80, 0.81], [0.005] * 6, [60, 100, 70, 90, 80, 85])


def test_clear_gains_pass_clear_losses_fail_and_noise_around_the_gate_is_inconclusive():
    assert verdicts(summaries(*CLEAR)) == ["pass", "pass", "pass"]
    assert verdicts(summaries(*WORSE)) == ["fail", "fail", "fail"]
    assert verdicts(summaries(*NOISY)) == ["inconclusive", "inconclusive", "inconclusive"]
    assert verdicts(summaries(*CLEAR), deciding=False) == ["undecided", "undecided", "undecided"]


def test_each_claim_is_decided_on_the_worse_of_its_conditions():
    c1, c2, c3 = claims(summaries(*CLEAR), deciding=True, **SETTINGS)
    assert c1.ours == pytest.approx(100 * (0.9335 - 0.90)) and c1.details["gap_vs_prox_sgd_pp"] == pytest.approx(8.35)
    assert c2.ours == pytest.approx(100 * (0.02 - 0.005)) and c2.details["accuracy_gain_pp"] == pytest.approx(5.35)
    assert c3.ours == pytest.approx(0.415) and "paired bootstrap over 6 seeds" in c3.verdict.interval.method
    assert c2.details["per_seed"][0]["sadam.volatility"] == pytest.approx(0.005)
    calmer_but_worse = claims(summaries(CLEAR[0], WORSE[1], CLEAR[2], CLEAR[3]), deciding=True, **SETTINGS)[1]
    assert calmer_but_worse.verdict.word == "fail" and calmer_but_worse.details["volatility_drop_pp"] > 0
    swinging = claims(summaries(CLEAR[0], CLEAR[1], [0.04] * 6, CLEAR[3]), deciding=True, **SETTINGS)[1]
    assert swinging.verdict.word == "fail" and swinging.details["accuracy_gain_pp"] > 0


def test_one_seed_gives_a_number_but_no_interval():
    one = [s for s in summaries(*CLEAR) if s["seed"] == 0]
    checked = claims(one, deciding=True, **SETTINGS)
    assert all(c.verdict.word == "undecided" and "at least 2" in c.verdict.reason for c in checked)
    assert checked[2].ours == pytest.approx(0.4)
