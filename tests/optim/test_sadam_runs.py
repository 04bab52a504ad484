"""The S-Adam study's pieces (spec s_adam §6): runs, chattering count, volatility, claims."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from tasks.optim.sadam_claims import claims, medians, run_summary, volatility
from tasks.optim.sadam_runs import build_optimizer, run_rosenbrock, sign_changes, train_digits


def test_sign_changes_skip_zeros():
    assert sign_changes(np.array([1.0, -2.0, 0.0, -1.0, 3.0, 0.0, 4.0])) == 2
    assert sign_changes(np.array([0.0, 0.0])) == 0


def test_volatility_uses_the_last_epochs():
    assert volatility([0.1, 0.9, 0.5, 0.5], last=2) == 0.0
    assert volatility([0.4, 0.6], last=10) == pytest.approx(0.1)


def test_unknown_optimizer_kind_is_named():
    with pytest.raises(ValueError, match="optimizer kind.*'lion'"):
        build_optimizer([torch.nn.Parameter(torch.zeros(1))], "lion", {}, seed=0)


def tiny_digits(seed=0) -> dict:
    g = np.random.default_rng(seed)
    return {"x_train": g.uniform(-1, 1, (40, 8)), "y_train": np.arange(40) % 3, "x_test": g.uniform(-1, 1, (12, 8)),
            "y_test": np.arange(12) % 3, "n_classes": 3}


def test_digits_runs_are_deterministic_and_no_brake_matches_adamw():
    options = dict(epochs=2, batch=8, hidden=(6,), quant=(7.0, -8, 7), seed=3)
    def numbers(run):  # everything but the wall times
        return [{k: v for k, v in row.items() if k != "wall_time_s"} for row in run["epochs"]], run["lgi"]

    sadam = train_digits(tiny_digits(), "y_train", kind="sadam", options={}, **options)
    assert numbers(sadam) == numbers(train_digits(tiny_digits(), "y_train", kind="sadam", options={}, **options))
    assert len(sadam["lgi"]) == 2 * 5 and all(0 < row["damp"] <= 1 for row in sadam["lgi"])
    no_brake = train_digits(tiny_digits(), "y_train", kind="sadam", options={"strength": 0.0}, **options)
    adamw = train_digits(tiny_digits(), "y_train", kind="adamw", options={}, **options)
    for a, b in zip(no_brake["epochs"], adamw["epochs"]):
        assert (a["train_loss"], a["test_accuracy"]) == (b["train_loss"], b["test_accuracy"])


def test_rosenbrock_trajectory_starts_at_the_start():
    run = run_rosenbrock(kind="adamw", options={"lr": 0.01, "weight_decay": 0.0}, seed=0, start=(-1.5, 2.0), steps=30)
    assert run["trajectory"].shape == (31, 2) and tuple(run["trajectory"][0]) == (-1.5, 2.0)
    assert run["lgi"] == [] and run["chattering"] == sign_changes(run["trajectory"][:, 1] - run["trajectory"][:, 0] ** 2)


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
