"""The sps_safe P3 digits runs: the registry's optimizers under their labels, every step's gradient norm recorded."""
from __future__ import annotations

import numpy as np
import pytest

from flows.sps_safe.params import DigitsOptimizerParams
from flows.sps_safe.experiments import run_label, train_digits
from flows.sps_safe.summaries import grad_norm_ratio
from tasks.train.digits import digits_split


@pytest.mark.parametrize("spec, expected", [
    ({"kind": "sps_safe", "M": 10.0}, "sps_safe_M10"), ({"kind": "ima_sps_safe"}, "ima_sps_safe_M1_lam9"),
    ({"kind": "sps_max", "c": 0.5, "gamma_b": 1.0}, "sps_max_c0.5_gamma_b1"), ({"kind": "adam"}, "adam_lr0.001"),
])
def test_labels_name_the_fields_the_kind_reads(spec, expected):
    assert run_label(DigitsOptimizerParams(**spec)) == expected


def test_digits_training_records_every_step_and_repeats_itself():
    split = digits_split(0, 0.2, scaling="standard")
    for spec in (DigitsOptimizerParams(kind="sps_safe", M=1.0), DigitsOptimizerParams(kind="sgd", lr=0.05)):
        first, again = (train_digits(split, spec, epochs=1, batch=256, seed=3) for _ in range(2))
        assert len(first["grad_norm"]) == first["steps_per_epoch"] == 6 and np.all(first["grad_norm"] > 0)
        assert len(first["test_accuracy"]) == 2 and first["test_accuracy"][-1] > first["test_accuracy"][0]
        np.testing.assert_array_equal(first["grad_norm"], again["grad_norm"])
        assert np.isfinite(first["step_size"]).all() == (spec.kind == "sps_safe")


def test_grad_norm_ratio_is_last_epoch_over_first():
    assert grad_norm_ratio(np.array([1.0, 3.0, 2.0, 4.0, 8.0, 6.0]), per_epoch=3) == pytest.approx(3.0)
