"""The claim checks decide from the replay summary they are given, and only where the profile allows."""
import math

import pytest

from flows.mip_early_stop.claims import family_claims

LIMITS = {"alpha": 0.05, "speed_ratio": 0.4, "min_coverage_mean": 0.94, "min_coverage_fixed": 0.9}


def outcome(coverage=0.95, ratio=0.3, network_time=1.0, gap_rule_time=2.0, tau=0.5):
    summary = {"network.coverage": coverage, "coverage_mean_over_splits": coverage, "coverage_min_over_splits": coverage,
               "tau": tau, "network.ratio_of_means": ratio, "network.mean_of_ratios": ratio, "oracle_ratio": 0.1,
               "oracle_mean_of_ratios": 0.2, "network.fired": 3, "network.never_fired": 0, "inference_ms_per_sample": 0.1,
               "network.mean_time_s": network_time,
               "gap_rule.mean_time_s": gap_rule_time, "gap_rule.coverage": 1.0, "gap_rule.ratio_of_means": 0.8}
    return {"summary": summary, "split_coverages": [coverage] * 3}


def verdicts(claims):
    return [c.passed for c in claims]


def test_each_claim_decides_from_its_own_numbers():
    assert verdicts(family_claims("mis", outcome(), [], decide=True, **LIMITS)) == [True, True, True]
    assert verdicts(family_claims("mis", outcome(ratio=0.5), [], decide=True, **LIMITS)) == [True, False, True]
    assert verdicts(family_claims("mis", outcome(coverage=0.8), [], decide=True, **LIMITS)) == [False, True, False]
    assert verdicts(family_claims("mis", outcome(network_time=3.0), [], decide=True, **LIMITS)) == [True, True, False]


def test_a_profile_that_does_not_decide_reports_numbers_only():
    online = [{"agree": True, "online_time_s": 1.0, "replay_time_s": 1.0},
              {"agree": False, "online_time_s": 3.0, "replay_time_s": 1.0}]
    claims = family_claims("gisp", outcome(tau=math.inf), online, decide=False, **LIMITS)
    assert verdicts(claims) == [None, None, None]
    assert [c.id for c in claims] == ["C1-gisp", "C2-gisp", "C3-gisp"]
    assert claims[0].details["tau"] == "inf", "a non-finite tau is written as a string (JSON has no inf)"
    assert claims[1].details["online_replay_agreement"] == pytest.approx(0.5)
    assert claims[1].details["online_over_replay_time"] == pytest.approx(2.0), "stop times compared, not only objectives"
    assert claims[2].ours == pytest.approx(0.5)
