"""UniDrag's claim checks: V1-V3 (solver validation, data set) and C1-C3, each pass, fail or inconclusive on its interval
(exact for V1, V2 and the NaN count), undecided where the profile is not sized to decide."""
from __future__ import annotations

import math

import numpy as np
import pytest

from flows.unidrag.claims import optimisation_claims, prediction_claim
from flows.unidrag.dataset_checks import validation_claims

VALIDATION = {"cd_mean": 5.9, "recirculation_length": 0.095, "diameter_cells": 10, "steps": 10000, "bounce_back": "halfway"}


def dataset(drift, nan_count=0):
    return {"nan_count": nan_count, "diverged": 0, "drift_mean": float(np.mean(drift)), "drift_max": float(np.max(drift)),
            "shapes": len(drift), "per_shape": [{"drift": d} for d in drift]}


def words(claims):
    return [c.verdict.word for c in claims]


def test_validation_claims_pass_fail_and_undecided():
    v1, v2, v3 = validation_claims(VALIDATION, dataset(np.linspace(0.005, 0.013, 100)), 0.10, 0.08, 0.015, 0, True)
    assert words([v1, v2, v3]) == ["pass", "fail", "pass"]
    assert v1.ours == pytest.approx(abs(5.9 - 5.5795) / 5.5795) and v1.verdict.reason.startswith("exact: one deterministic")
    assert v3.verdict.interval.n == 100 and v3.verdict.interval.high < 0.015
    smoke = validation_claims(VALIDATION, dataset([0.01, 0.02]), 0.10, 0.08, 0.015, 0, False)
    assert words(smoke) == ["undecided"] * 3


def test_the_drift_is_decided_on_its_interval_and_a_nan_fails_outright():
    def v3(drift, nan_count=0):
        return validation_claims(VALIDATION, dataset(drift, nan_count), 0.1, 0.08, 0.015, 0, True)[2].verdict

    assert v3(np.linspace(0.017, 0.025, 100)).word == "fail"
    assert v3(np.linspace(0.0, 0.03, 20)).word == "inconclusive"  # mean 0.015, wide spread
    nan = v3(np.linspace(0.005, 0.013, 100), nan_count=1)
    assert nan.word == "fail" and nan.interval is None and "1 non-finite values" in nan.reason


def shape(index, predicted, verified, success=True, own=None):
    """One verified optimisation; `own`: the own-A_ref Cd reduction (default: `verified`, success alike)."""
    own = (verified if success else -abs(verified) - 0.01) if own is None else own
    return {"index": index, "predicted_reduction": predicted, "verified_reduction": verified,
            "verified_reduction_own_aref": own, "success": success, "constraints_hold": True, "mean_displacement": 0.01}


def methods(eot_verified, no_eot_verified, eot_success=None, no_eot_success=None, predicted=0.1):
    """eot / no_eot rows of the same shapes, each predicted to reduce drag by `predicted`."""
    n = len(eot_verified)
    eot_success = [True] * n if eot_success is None else eot_success
    no_eot_success = [True] * n if no_eot_success is None else no_eot_success
    return {"eot": [shape(k, predicted, v, s) for k, (v, s) in enumerate(zip(eot_verified, eot_success))],
            "no_eot": [shape(k, predicted, v, s) for k, (v, s) in enumerate(zip(no_eot_verified, no_eot_success))]}


def optimisation(by_method, decide_claims=True):
    return optimisation_claims(by_method, min_reduction=0.03, min_success=0.875, seed=0, decide_claims=decide_claims)


def test_c2_c3_clear_samples_pass():
    c2, c3 = optimisation(methods(np.linspace(0.07, 0.09, 8), np.linspace(0.0, 0.02, 8)))
    assert words([c2, c3]) == ["pass", "pass"]
    assert c2.ours == pytest.approx(0.08) and c2.details["mean_displacement_pct_l"] == pytest.approx(1.0)
    assert c2.details["verified_reduction_own_aref_per_shape"] == pytest.approx(np.linspace(0.07, 0.09, 8))
    assert c3.ours == pytest.approx(0.02 - 0.09) and c3.threshold == 0.0 and c3.details["paired_shapes"] == 8
    assert "paired bootstrap over 8 optimised shapes" in c3.verdict.interval.method


def test_c2_c3_clear_misses_fail():
    c2, c3 = optimisation(methods(np.linspace(0.0, 0.02, 8), np.linspace(0.07, 0.09, 8)))
    assert words([c2, c3]) == ["fail", "fail"]
    failing = [True] * 2 + [False] * 6  # a 25% success rate: nearly every resample is below 0.875 and no-EoT's 100%
    c2, c3 = optimisation(methods(np.linspace(0.07, 0.09, 8), np.linspace(0.0, 0.02, 8), eot_success=failing))
    assert words([c2, c3]) == ["fail", "fail"] and c2.verdict.interval.high == -math.inf
    assert "success rate is below 0.875 counting as -inf" in c2.verdict.interval.method


def test_c2_is_decided_on_each_shapes_own_frontal_area_not_on_drag_force():
    """Drag force down 8% through a lower roof while Cd at the shape's own (smaller) A_ref rises 5-9%: C2 fails, and
    the force numbers stay in the details as report-only; C3 still reads drag force."""
    force, own = np.linspace(0.07, 0.09, 8), np.linspace(-0.09, -0.05, 8)
    by_method = methods(force, np.linspace(0.0, 0.02, 8))
    by_method["eot"] = [shape(k, 0.1, f, own=o) for k, (f, o) in enumerate(zip(force, own))]
    c2, c3 = optimisation(by_method)
    assert c2.verdict.word == "fail" and c2.ours == pytest.approx(-0.07) and "own frontal area" in c2.statement
    assert c2.details["success_rate_own_aref"] == 0.0 and c2.details["success_rate"] == 1.0
    assert c2.details["report_only"]["mean_verified_force_reduction"] == pytest.approx(0.08)
    assert c2.details["report_only"]["verified_force_reduction_per_shape"] == pytest.approx(force)
    assert c3.verdict.word == "pass"  # the gap and success of drag force, as the optimiser minimises it
    by_method["eot"] = [shape(k, 0.1, f, own=f - 0.02) for k, f in enumerate(force)]  # own-area Cd down 5-7%
    assert optimisation(by_method)[0].verdict.word == "pass"


def test_c2_c3_noisy_samples_near_the_gates_are_inconclusive():
    c2, c3 = optimisation(methods(np.linspace(-0.03, 0.09, 8), np.linspace(-0.05, 0.11, 8)[::-1]))
    assert words([c2, c3]) == ["inconclusive", "inconclusive"]
    assert c2.verdict.interval.low < 0.03 < c2.verdict.interval.high
    assert c3.verdict.interval.low < 0.0 < c3.verdict.interval.high


def test_c2_c3_stay_undecided_when_asked():
    assert words(optimisation(methods([0.1, 0.1], [0.0, 0.0]), decide_claims=False)) == ["undecided"] * 2


def prediction(gain, r2, decide_claims=True):
    interval = lambda low, high: {"value": (low + high) / 2, "ci_low": low, "ci_high": high, "se": 0.01}  # noqa: E731
    intervals = {"unidrag": interval(*r2), "transolver": interval(0.5, 0.6), "unidrag-transolver": interval(*gain)}
    models = {"unidrag": [{"r2_cd": sum(r2) / 2}], "transolver": [{"r2_cd": 0.55}]}
    return prediction_claim(models, intervals, min_r2=0.8, shapes=60, resamples=2000, decide_claims=decide_claims)


@pytest.mark.parametrize(("gain", "r2", "word"), [
    ((0.01, 0.1), (0.85, 0.95), "pass"),
    ((-0.1, -0.01), (0.85, 0.95), "fail"),  # Transolver clearly better
    ((0.01, 0.1), (0.6, 0.75), "fail"),  # clearly below 0.80
    ((-0.05, 0.1), (0.85, 0.95), "inconclusive"),  # the gain's interval holds 0
    ((0.01, 0.1), (0.7, 0.9), "inconclusive"),  # R^2's interval holds 0.80
])
def test_claim_c1_is_decided_on_both_intervals(gain, r2, word):
    claim = prediction(gain, r2)
    assert claim.verdict.word == word
    assert (claim.verdict.interval.low, claim.verdict.interval.high, claim.verdict.interval.n) == (*r2, 60)
    assert "Transolver" in claim.verdict.reason and "2000 resamples" in claim.verdict.interval.method


def test_claim_c1_stays_undecided_when_asked():
    claim = prediction((0.01, 0.1), (0.85, 0.95), decide_claims=False)
    assert claim.verdict.word == "undecided" and claim.details["absolute_gain_interval"]["ci_low"] == 0.01
