"""The S-Adam claim checks (spec s_adam §6): volatility, per-run summaries, medians over seeds, C1-C3."""
from __future__ import annotations

import pytest

from flows.s_adam.claims import claims, medians, run_summary, volatility


def test_volatility_uses_the_last_epochs():
    assert volatility([0.1, 0.9, 0.5, 0.5], last=2) == 0.0
    assert volatility([0.4, 0.6], last=10) == pytest.approx(0.1)


def digits_run(task, optimizer, seed, accuracies, damp=None):
    return {"task": task, "optimizer": optimizer, "seed": seed,
            "epochs": [{"test_accuracy": a, "test_loss": 1.0, "mean_damp": damp, "wall_time_s": 0.1} for a in accuracies]}


def ridge_run(optimizer, seed, chattering):
    return {"task": "ridge", "optimizer": optimizer, "seed": seed, "chattering": chattering, "final_distance": 1.0,
            "mean_damp": None, "wall_time_s": 0.1}


def test_claims_compare_medians_over_seeds():
    runs = []
    for seed in range(3):
        runs += [digits_run("qat", "sadam", seed, [0.9, 0.91], 0.3), digits_run("qat", "adamw", seed, [0.9, 0.90 + 0.01 * seed]),
                 digits_run("qat", "prox_sgd", seed, [0.8, 0.85]),
                 digits_run("noisy", "sadam", seed, [0.7, 0.7], 0.2), digits_run("noisy", "adamw", seed, [0.6, 0.8]),
                 ridge_run("sadam", seed, 40 + seed), ridge_run("adamw", seed, 100)]
    table = medians([run_summary(r, volatility_epochs=10) for r in runs])
    c1, c2, c3 = claims(table, qat_task="qat", noisy_task="noisy", rosenbrock_task="ridge", chattering_ratio=0.8, decide=True)
    assert c1.passed and c1.ours == pytest.approx(0.0)  # 0.91 vs AdamW's median 0.91
    assert c1.details["gap_vs_prox_sgd_pp"] == pytest.approx(6.0)
    assert not c2.passed and c2.ours == pytest.approx(-10.0)  # accuracy 0.7 vs 0.8
    assert c2.details["median_volatility"] == {"sadam": 0.0, "adamw": pytest.approx(0.1)}
    assert c3.passed and c3.ours == pytest.approx(0.41)
    undecided = claims(table, qat_task="qat", noisy_task="noisy", rosenbrock_task="ridge", chattering_ratio=0.8, decide=False)
    assert [c.passed for c in undecided] == [None, None, None]
