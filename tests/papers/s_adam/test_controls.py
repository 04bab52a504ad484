"""The lr x damping control of C1 and C2 (flows/s_adam/controls.py): the measured damping, AdamW's options, the details."""
from __future__ import annotations

from pathlib import Path

import pytest

from flows.s_adam.claims import claims, medians, run_summary
from flows.s_adam.controls import control_details, damped_options, measured_damping
from flows.s_adam.params import CONTROL
from tests.papers.s_adam.test_claims import digits_run, ridge_run


def test_damping_is_the_median_over_seeds_of_each_runs_mean_damp():
    summaries = [{"task": "qat", "optimizer": "sadam", "seed": s, "mean_damp": d} for s, d in enumerate((0.2, 0.5, 0.3))]
    summaries += [{"task": "qat", "optimizer": "adamw", "seed": 0, "mean_damp": None},
                  {"task": "noisy", "optimizer": "sadam", "seed": 0, "mean_damp": 0.9}]
    assert measured_damping(summaries, "qat") == {"by_seed": {0: 0.2, 1: 0.5, 2: 0.3}, "damping": 0.3}
    run = digits_run("qat", "sadam", 0, [0.5, 0.6, 0.7], damp=0.25)  # per-epoch mean damps, equal steps per epoch
    assert measured_damping([run_summary(run, volatility_epochs=10)], "qat")["damping"] == 0.25
    with pytest.raises(ValueError, match="no S-Adam runs"):
        measured_damping(summaries, "ridge")


def test_control_scales_only_adamws_lr():
    assert damped_options({"lr": 1e-3, "weight_decay": 1e-2}, 0.25) == {"lr": 2.5e-4, "weight_decay": 1e-2}
    for bad in (0.0, 1.5):
        with pytest.raises(ValueError, match="damping"):
            damped_options({"lr": 1e-3}, bad)


def test_control_is_shown_beside_the_claim_and_never_changes_the_verdict():
    runs = []
    for seed in range(3):
        runs += [digits_run("qat", "sadam", seed, [0.9, 0.91], 0.3), digits_run("qat", "adamw", seed, [0.9, 0.90]),
                 digits_run("qat", "prox_sgd", seed, [0.8, 0.85]), digits_run("qat", CONTROL, seed, [0.9, 0.95]),
                 digits_run("noisy", "sadam", seed, [0.7, 0.7], 0.2), digits_run("noisy", "adamw", seed, [0.6, 0.8]),
                 digits_run("noisy", CONTROL, seed, [0.6, 0.7]), ridge_run("sadam", seed, 40), ridge_run("adamw", seed, 100)]
    summaries = [run_summary(r, volatility_epochs=10) for r in runs]
    table = medians(summaries)
    record = {"damping": 0.3, "lr": 3e-4, "adamw_lr": 1e-3}
    controls = {task: control_details(table, task, record) for task in ("qat", "noisy")}
    common = dict(qat_task="qat", noisy_task="noisy", rosenbrock_task="ridge", chattering_ratio=0.8, deciding=True)
    with_controls, without = claims(summaries, controls=controls, **common), claims(summaries, **common)
    assert [c.verdict for c in with_controls] == [c.verdict for c in without]
    assert [c.verdict.word for c in with_controls] == ["pass", "fail", "pass"]
    qat = with_controls[0].details["controls"][CONTROL]
    assert qat["median_accuracy"] == 0.95 and qat["lr"] == 3e-4 and qat["sadam_minus_control_pp"] == pytest.approx(-4.0)
    noisy = with_controls[1].details["controls"][CONTROL]
    assert noisy["median_volatility"] == pytest.approx(0.05) and noisy["control_minus_adamw_pp"] == pytest.approx(-10.0)
    assert without[0].details["controls"] == {} and "controls" not in with_controls[2].details


def test_params_keep_the_controls_name_free():
    from pydantic import ValidationError

    from flows.s_adam.params import Params
    from tasks.core.params import profile_values

    profile = profile_values(Path(__file__).resolve().parents[3], "s_adam", "smoke")
    Params(**profile)
    profile["optimizers"][CONTROL] = {"kind": "adamw"}
    with pytest.raises(ValidationError, match="names the lr x damping control"):
        Params(**profile)
