"""The S-Adam study's runs (spec s_adam §6): its optimizers, digits and Rosenbrock runs, the chattering count."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from flows.s_adam.experiments import make_optimizer, run_rosenbrock, sign_changes, train_digits
from tasks.core.seeding import derive_seed
from tasks.optim.prox_sgd import ProxSGD
from tasks.optim.sadam import SAdam


def test_sign_changes_skip_zeros():
    assert sign_changes(np.array([1.0, -2.0, 0.0, -1.0, 3.0, 0.0, 4.0])) == 2
    assert sign_changes(np.array([0.0, 0.0])) == 0


def test_adamw_comes_from_the_registry_and_sadam_probes_are_seeded_by_the_run():
    parameter = torch.nn.Parameter(torch.zeros(1))
    sadam = make_optimizer("sadam", {"strength": 0.5}, seed=3)([], [parameter])
    assert isinstance(sadam, SAdam) and sadam.seed == derive_seed(3, "probes") and sadam.param_groups[0]["strength"] == 0.5
    assert isinstance(make_optimizer("prox_sgd", {"l1": 0.0}, seed=3)([], [parameter]), ProxSGD)
    adamw = make_optimizer("adamw", {"lr": 0.01}, seed=3)([], [parameter])
    assert type(adamw) is torch.optim.AdamW and adamw.param_groups[0]["lr"] == 0.01
    with pytest.raises(ValueError, match="unknown hyperparameter 'strength'"):
        make_optimizer("adamw", {"strength": 0.5}, seed=3)([], [parameter])


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
