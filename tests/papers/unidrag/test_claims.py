"""UniDrag's claim checks: V1-V3 (solver validation, data set) and C2-C3 (verified optimisation)."""
from __future__ import annotations

import pytest

from flows.unidrag.claims import optimisation_claims
from flows.unidrag.dataset_checks import validation_claims


def test_validation_claims_pass_fail_and_undecided():
    validation = {"cd_mean": 5.9, "recirculation_length": 0.095, "diameter_cells": 10, "steps": 10000,
                  "bounce_back": "halfway"}
    dataset = {"nan_count": 0, "diverged": 0, "drift_mean": 0.01, "drift_max": 0.02, "shapes": 144}
    v1, v2, v3 = validation_claims(validation, dataset, 0.10, 0.08, 0.015, decide=True)
    assert (v1.passed, v2.passed, v3.passed) == (True, False, True)
    assert v1.ours == pytest.approx(abs(5.9 - 5.5795) / 5.5795)
    assert all(c.passed is None for c in validation_claims(validation, dataset, 0.10, 0.08, 0.015, decide=False))
    assert validation_claims(validation, dataset | {"nan_count": 1}, 0.1, 0.08, 0.015, True)[2].passed is False


def test_claims_c2_c3_follow_the_spec_and_stay_undecided_when_asked():
    def row(predicted, verified, success=True):
        return {"predicted_reduction": predicted, "verified_reduction": verified, "verified_reduction_own_aref": verified,
                "success": success, "constraints_hold": True, "mean_displacement": 0.01}

    by_method = {"eot": [row(0.05, 0.04), row(0.05, 0.03)], "no_eot": [row(0.20, 0.01), row(0.2, -0.01, False)]}
    c2, c3 = optimisation_claims(by_method, min_reduction=0.03, min_success=0.875, decide=True)
    assert c2.ours == pytest.approx(0.035) and c2.passed and c2.details["mean_displacement_pct_l"] == pytest.approx(1.0)
    assert c3.ours == pytest.approx(0.015) and c3.threshold == pytest.approx(0.2) and c3.passed
    by_method["eot"][1] = row(0.05, -0.02, False)
    c2, c3 = optimisation_claims(by_method, 0.03, 0.875, decide=True)
    assert c2.passed is False and c3.passed is True  # success 1/2 >= 1/2 of no-EoT
    assert all(c.passed is None for c in optimisation_claims(by_method, 0.03, 0.875, decide=False))


def test_claim_c1_is_decided_only_where_the_intervals_allow():
    from flows.unidrag.claims import prediction_claim

    def claim(gain, r2):
        interval = lambda low, high: {"value": (low + high) / 2, "ci_low": low, "ci_high": high, "se": 0.01}
        intervals = {"unidrag": interval(*r2), "transolver": interval(0.5, 0.6), "unidrag-transolver": interval(*gain)}
        models = {"unidrag": [{"r2_cd": sum(r2) / 2}], "transolver": [{"r2_cd": 0.55}]}
        return prediction_claim(models, intervals, min_r2=0.8, decide=True)

    assert claim((0.01, 0.1), (0.85, 0.95)).passed is True
    assert claim((-0.1, -0.01), (0.85, 0.95)).passed is False  # Transolver clearly better
    assert claim((0.01, 0.1), (0.6, 0.75)).passed is False  # clearly below 0.80
    assert claim((-0.05, 0.1), (0.85, 0.95)).passed is None  # the gap's interval holds 0
    assert claim((0.01, 0.1), (0.7, 0.9)).passed is None  # R^2's interval holds 0.80
