"""The claim checks decide on bootstraps over the family's instances: pass when the interval clears the gate, fail
when it misses it, inconclusive when it straddles; undecided where the profile is not sized to decide."""
import math

import numpy as np
import pytest

from flows.mip_early_stop.claims import coverage_statistic, family_claims, thresholds
from tasks.mip.conformal import conformal_threshold, coverage_over_splits, score

GATES = {"alpha": 0.05, "quantile": "finite", "coverage_splits": 40, "speed_ratio": 0.75, "min_coverage_mean": 0.93,
         "min_coverage_fixed": 0.85, "seed": 0, "unproved": {"train": 0, "cal": 0, "test": 0}}


def outcome(network_time, default_time, gap_rule_time, network_covered, gap_rule_covered, cal_scores, test_scores,
            tau=0.5):
    """A replay outcome of one family from per-test-instance times and coverage flags and the conformal scores."""
    rows = [{"instance": f"i{k:03d}", "rule": rule, "time": float(time), "covered": bool(covered)}
            for rule, times, flags in (("network", network_time, network_covered),
                                       ("scip_default", default_time, np.ones(len(default_time))),
                                       ("gap_rule", gap_rule_time, gap_rule_covered))
            for k, (time, covered) in enumerate(zip(times, flags))]
    mean = {rule: float(np.mean([r["time"] for r in rows if r["rule"] == rule])) for rule in ("network", "scip_default",
                                                                                             "gap_rule")}
    summary = {"network.coverage": float(np.mean(network_covered)), "coverage_mean_over_splits": 0.95,
               "coverage_min_over_splits": 0.9, "tau": tau, "network.ratio_of_means": mean["network"] / mean["scip_default"],
               "network.mean_of_ratios": 0.5, "oracle_ratio": 0.1, "oracle_mean_of_ratios": 0.2, "network.fired": 3,
               "network.never_fired": 0, "inference_ms_per_sample": 0.1, "network.mean_time_s": mean["network"],
               "gap_rule.mean_time_s": mean["gap_rule"], "gap_rule.coverage": float(np.mean(gap_rule_covered)),
               "gap_rule.ratio_of_means": mean["gap_rule"] / mean["scip_default"]}
    return {"summary": summary, "rows": rows, "split_coverages": [0.95] * 3, "splits_seed": 7,
            "scores": {"cal": list(cal_scores), "test": list(test_scores)}}


def sample(ratio=0.5, gap_ratio=2.0, noise=0.05, covered=40, gap_covered=40, uncovered_scores=0, n=40, seed=0):
    """n test instances whose network takes `ratio` x SCIP default's time and the gap rule `gap_ratio` x the network's
    (ratios of means; noisy per instance), the first `covered` of them covered; exchangeable calibration and test
    scores, but for `uncovered_scores` test scores below every calibration score."""
    rng = np.random.default_rng(seed)
    default = rng.uniform(5.0, 15.0, n)
    network, gap_rule = (rng.lognormal(0.0, noise, n) for _ in range(2))
    network *= ratio * default.sum() / (default * network).sum() * default  # ratios of means exactly as asked
    gap_rule *= gap_ratio * network.sum() / (network * gap_rule).sum() * network
    flags = lambda k: np.arange(n) < k  # noqa: E731
    test_scores = np.where(np.arange(n) < uncovered_scores, -1.0, rng.uniform(0, 1, n))
    return outcome(network, default, gap_rule, flags(covered), flags(gap_covered), rng.uniform(0, 1, 100), test_scores)


def words(claims):
    return [c.verdict.word for c in claims]


def claims_of(data, decide_claims=True, **changes):
    return family_claims("mis", data, [], **(GATES | changes), decide_claims=decide_claims)


def test_clear_samples_pass_and_the_numbers_behind_them_are_kept():
    c1, c2, c3 = claims_of(sample(), min_coverage_mean=0.85, min_coverage_fixed=0.8)
    assert words([c1, c2, c3]) == ["pass", "pass", "pass"]
    assert c2.ours == pytest.approx(np.mean(c2.details["network_time_s"]) / np.mean(c2.details["default_time_s"]))
    assert c2.verdict.interval.low < c2.ours < c2.verdict.interval.high and c2.verdict.interval.n == 40
    assert "paired bootstrap over 40 test instances" in c2.verdict.interval.method
    assert c1.verdict.interval.n == 140 and c1.details["calibration_instances"] == 100
    assert c3.ours == pytest.approx(0.5, rel=0.05) and len(c3.details["gap_rule_time_s"]) == 40


def test_clear_misses_fail():
    # alpha = 0.3: the pooled splits cover ~70% (random halvings are exchangeable whatever the instances)
    c1, c2, c3 = claims_of(sample(ratio=1.0, gap_ratio=0.8), alpha=0.3, min_coverage_fixed=0.0)
    assert words([c1, c2, c3]) == ["fail", "fail", "fail"]
    assert c1.verdict.interval.high < 0.93 and c2.verdict.interval.low > 0.75 and c3.verdict.interval.low > 1.0


def test_noisy_samples_near_the_gates_are_inconclusive():
    _, c2, c3 = claims_of(sample(ratio=0.75, gap_ratio=1.0, noise=0.3))
    assert words([c2, c3]) == ["inconclusive", "inconclusive"]
    assert c2.verdict.interval.low < 0.75 < c2.verdict.interval.high and c3.verdict.interval.low < 1.0
    c1 = claims_of(sample(uncovered_scores=4))[0]  # the fixed split covers ~36 of 40: 0.85 is in doubt
    assert c1.verdict.word == "inconclusive" and c1.verdict.interval.low == -math.inf


def test_a_side_condition_in_doubt_leaves_a_clear_speed_up_inconclusive_and_a_clear_miss_fails_it():
    c3 = claims_of(sample(covered=35))[2]  # 2x faster than the gap rule, but covers 35 of 40: 0.85 is in doubt
    assert c3.verdict.word == "inconclusive" and c3.verdict.interval.high == math.inf
    assert "either rule covers < 0.85 counting as +inf" in c3.verdict.interval.method
    assert claims_of(sample(covered=25))[2].verdict.word == "fail"  # coverage 0.625: every resample fails it
    assert claims_of(sample(uncovered_scores=20))[0].verdict.word == "fail"  # the fixed split covers ~half: -inf


def test_a_profile_that_does_not_decide_reports_numbers_only():
    online = [{"agree": True, "stop_time_agrees": False, "online_time_s": 1.0, "replay_time_s": 1.0},
              {"agree": False, "stop_time_agrees": False, "online_time_s": 3.0, "replay_time_s": 1.0}]
    data = sample(n=2)
    data["summary"]["tau"] = math.inf
    left_out = {"train": 1, "cal": 2, "test": 0}
    claims = family_claims("gisp", data, online, **(GATES | {"unproved": left_out}), decide_claims=False)
    assert words(claims) == ["undecided"] * 3 and all(c.verdict.interval is None for c in claims)
    assert [c.id for c in claims] == ["C1-gisp", "C2-gisp", "C3-gisp"]
    assert claims[0].details["tau"] == "inf", "a non-finite tau is written as a string (JSON has no inf)"
    assert claims[1].details["online_replay_agreement"] == pytest.approx(0.5)
    assert claims[1].details["online_over_replay_time"] == pytest.approx(2.0), "stop times compared, not only objectives"
    assert claims[1].details["online_stop_time_agreement"] == 0.0
    assert all(c.details["unproved_left_out"] == left_out for c in claims), "unproved solves are counted, never silently"


def test_verdicts_are_reproducible():
    assert claims_of(sample(noise=0.3))[1].verdict == claims_of(sample(noise=0.3))[1].verdict


@pytest.mark.parametrize("quantile", ["finite", "numpy"])
@pytest.mark.parametrize("n", [10, 70])
def test_thresholds_are_conformal_threshold_row_by_row(quantile, n):
    scores = np.random.default_rng(n).uniform(size=(5, n))
    scores[0, :3] = math.inf
    assert thresholds(scores, 0.1, quantile).tolist() == [conformal_threshold(row, 0.1, quantile) for row in scores]


def test_the_coverage_statistic_is_the_mean_over_splits_of_scores_at_or_above_tau():
    statistic = coverage_statistic(0.1, "finite", splits=1, seed=3, min_fixed=0.0)
    cal, test = np.arange(10.0), np.arange(10.0, 20.0)
    pooled = np.concatenate([cal, test])[np.random.default_rng(3).permutation(20)]
    tau = conformal_threshold(pooled[:10], 0.1, "finite")  # floor(0.1 * 11) = 1: the smallest
    assert statistic(cal, test) == pytest.approx(np.mean(pooled[10:] >= tau))
    assert coverage_statistic(0.1, "finite", 1, 3, min_fixed=0.5)(cal, test - 20) == -math.inf  # fixed split: 0


def test_on_the_instances_as_drawn_the_coverage_statistic_is_the_replayed_mean_over_splits():
    rng = np.random.default_rng(5)
    preds, rs, nsols = [], [], []
    for _ in range(30):  # solves of 40 samples: no incumbent, then incumbents closing in on the optimum at a random row
        rows, optimal = 40, int(rng.integers(5, 40))
        preds.append(np.r_[np.inf, np.sort(rng.uniform(0, 5, rows - 1))[::-1]])
        rs.append(np.where(np.arange(rows) < optimal, np.linspace(0.1, 0.002, rows), 0.0))
        nsols.append(np.r_[0, np.ones(rows - 1)])
    scores = np.array([score(p, r, 1e-3) for p, r in zip(preds, rs)])
    replayed = coverage_over_splits(preds, rs, nsols, alpha=0.1, eps=1e-3, n_splits=25, seed=11)
    statistic = coverage_statistic(0.1, "finite", splits=25, seed=11, min_fixed=0.0)
    assert statistic(scores[:20], scores[20:]) == pytest.approx(np.mean(replayed))
