"""The timing model fed by a run's own costs, its ceiling, which runs each repeat holds, and the profiles' sizes: every
profile that decides claims runs the 9 repeats the interval of a median needs."""
from __future__ import annotations

from pathlib import Path

import pytest

from flows.minedraft.params import Params
from flows.minedraft.pipeline import draft_lengths
from flows.minedraft.timing_model import StepCosts, busy_costs, calibrated_costs, ideal_ceiling, predicted_run_ratio
from tasks.core.claims import MIN_TIMING_REPEATS
from tasks.core.params import ParamsError, load_paper_params, profile_values, validate

ROOT = Path(__file__).resolve().parents[3]


def test_ideal_ceiling_is_one_plus_the_smaller_over_the_larger_cost():
    assert ideal_ceiling(0.1, 1.0) == pytest.approx(1.1)  # 1 + k c_d / c_v while drafting is cheaper
    assert ideal_ceiling(1.0, 1.0) == pytest.approx(2.0)
    assert ideal_ceiling(3.0, 1.0) == pytest.approx(4.0 / 3.0)


def test_run_ratio_follows_the_step_formulas():
    # spec test 8: linear costs, k c_d = c_v, no overhead (twice the steps at half the cost): S = 2;
    # batch-independent costs: S = 1
    full, half = StepCosts(1.0, 1.0, 0.0), StepCosts(0.5, 0.5, 0.0)
    assert predicted_run_ratio(full, 10, half, 20) == pytest.approx(2.0)
    assert predicted_run_ratio(full, 10, full, 20) == pytest.approx(1.0)
    # o' adds to every half step: 20 (0.5 + 0.25) = 15 s against 20 s
    assert predicted_run_ratio(full, 10, StepCosts(0.5, 0.5, 0.25), 20) == pytest.approx(20 / 15)
    # more PSD steps (lower acceptance in a half) lower the prediction in proportion
    assert predicted_run_ratio(full, 10, half, 25) == pytest.approx(20 / 12.5)


def test_costs_from_busy_times_and_from_the_bracketing_calibrations():
    run = {"busy_draft_s": 3.0, "busy_verify_s": 6.0, "steps": 30,
           "calibration": {"before": {"draft_s": 0.1, "verify_s": 0.2, "round_trip_s": 0.001},
                           "after": {"draft_s": 0.3, "verify_s": 0.2, "round_trip_s": 0.003}}}
    assert busy_costs(run, 0.002) == StepCosts(0.1, 0.2, 0.002)
    assert calibrated_costs(run) == StepCosts(pytest.approx(0.2), pytest.approx(0.2), pytest.approx(0.002))


def default_params(**changes) -> Params:
    return validate(Params, profile_values(ROOT, "minedraft", "default") | changes, "minedraft.default")


def test_references_run_in_their_repeats_and_sd_2c_at_its_control_ks():
    params = default_params()
    assert draft_lengths(params, "SD-1c", 8) == draft_lengths(params, "PSD-2c", 0) == [1, 2, 4]
    assert draft_lengths(params, "AR-1c", 0) == [1] and draft_lengths(params, "AR-1c", 3) == []
    assert draft_lengths(params, "SD-2c", 2) == [2] and draft_lengths(params, "SD-2c", 3) == []
    assert draft_lengths(default_params(control_ks=None), "SD-2c", 0) == [1, 2, 4]


def test_params_refuse_control_ks_outside_ks_and_too_many_reference_repeats():
    with pytest.raises(ParamsError, match="control_ks"):
        default_params(control_ks=[3])
    with pytest.raises(ParamsError, match="reference_repeats"):
        default_params(reference_repeats=10)


@pytest.mark.parametrize("profile", ["default", "full"])
def test_deciding_profiles_run_enough_repeats_and_probe_rounds(profile):
    params = load_paper_params(ROOT, "minedraft", profile, Params)
    assert params.decide_claims and params.repeats >= MIN_TIMING_REPEATS  # probe rounds: repeats + 1
    assert params.gpu_variants == (profile == "full")
