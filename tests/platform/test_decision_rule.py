"""The one decision rule of every gated claim (tasks/core/claims.py): an interval against a gate gives pass, fail or
inconclusive; the intervals cover what they say they cover."""
from __future__ import annotations

import json

import numpy as np
import pytest

from tasks.core.claims import (Claim, Gate, Interval, Verdict, _shape_problem, all_hold, bootstrap_interval,
                               claims_document, claims_rows, decide, exact, headline_metrics, median_interval, never_reached, not_run, on_interval,
                               on_timings, report_only, t_interval, worst_part)


def interval(low: float, high: float) -> Interval:
    return Interval(low, high, 10, "test")


@pytest.mark.parametrize(("low", "high", "gate", "word"), [
    (1.2, 1.5, Gate(low=1.15), "pass"),
    (1.0, 1.1, Gate(low=1.15), "fail"),
    (1.1, 1.2, Gate(low=1.15), "inconclusive"),
    (0.6, 0.9, Gate(high=1.0), "pass"),
    (0.95, 1.1, Gate(high=1.0), "inconclusive"),
    (0.7, 1.4, Gate(0.67, 1.5), "pass"),
    (0.5, 0.6, Gate(0.67, 1.5), "fail"),
    (1.6, 2.0, Gate(0.67, 1.5), "fail"),
    (0.6, 0.9, Gate(0.67, 1.5), "inconclusive"),
    (0.5, 2.0, Gate(0.67, 1.5), "inconclusive"),
])
def test_an_interval_clears_misses_or_straddles_its_gate(low, high, gate, word):
    verdict = on_interval(interval(low, high), gate)
    assert verdict.word == word and verdict.interval == interval(low, high)
    assert verdict.passed == {"pass": True, "fail": False}.get(word)


def test_exact_unreached_unrun_and_report_verdicts_say_why():
    assert exact(True, "weights equal to the bit").word == "pass" and exact(False, "x").reason == "exact: x"
    assert never_reached("N > budget on 3 of 10 instances").word == "fail"
    assert not_run("the profile lacks d = 200").word == "undecided"
    assert report_only().word == "report" and report_only().passed is None
    assert decide(lambda: exact(True, "x"), deciding=False).word == "undecided"
    with pytest.raises(ValueError, match="verdict: must be one of"):
        Verdict("maybe")
    with pytest.raises(ValueError, match="a gate needs"):
        Gate()
    with pytest.raises(TypeError, match="verdict must be a tasks.core.claims.Verdict"):
        Claim("C1", "s", "p", 1.0, 1.0, True)


def test_the_bootstrap_covers_a_known_mean_about_as_often_as_it_says():
    rng = np.random.default_rng(0)
    covered = sum(lo <= 0.0 <= hi for lo, hi in (
        (i.low, i.high) for i in (bootstrap_interval([rng.normal(size=30)], np.mean, seed, "seeds", resamples=500)
                                  for seed in range(200))))
    assert 0.88 <= covered / 200 <= 0.99


def test_a_paired_bootstrap_resamples_rows_together_and_is_reproducible():
    rng = np.random.default_rng(1)
    base = rng.normal(size=20)
    pairs = np.stack([base + 0.5, base], axis=1)  # a constant difference: the paired interval is a point
    paired = bootstrap_interval([pairs], lambda p: float(np.mean(p[:, 0] - p[:, 1])), 0, "seeds")
    assert paired.low == pytest.approx(0.5) and paired.high == pytest.approx(0.5) and "paired" in paired.method
    unpaired = bootstrap_interval([pairs[:, 0], pairs[:, 1]], lambda a, b: float(a.mean() - b.mean()), 0, "seeds")
    assert unpaired.high - unpaired.low > 0.3
    assert bootstrap_interval([pairs], lambda p: float(p.mean()), 3, "seeds") == \
        bootstrap_interval([pairs], lambda p: float(p.mean()), 3, "seeds")


def test_targets_never_reached_sort_as_bounds_and_undefined_resamples_widen_the_interval():
    values = np.array([1.0, 2.0, np.inf, 1.5, 1.2, 1.1])
    found = bootstrap_interval([values], lambda v: float(np.median(v)), 0, "instances")
    assert np.isfinite(found.low) and found.high == np.inf
    undefined = bootstrap_interval([values], lambda v: np.nan if v[0] == 2.0 else float(v.min()), 0, "instances")
    assert undefined.low == -np.inf and undefined.high == np.inf
    document = claims_document("p", "default", "c", [Claim("C1", "s", "p", 1.3, 2.0, on_interval(found, Gate(high=2.0)))])
    assert json.loads(json.dumps(document, allow_nan=False))["claims"][0]["interval"]["high"] == "inf"
    assert claims_rows(document)[0][4].endswith(", inf]")
    assert document["claims"][0]["verdict"] == "inconclusive"


def test_an_interval_wholly_at_minus_infinity_reads_as_such_not_as_unbounded():
    """Every resample failed (counted as -inf): claims.json, its reader and the tables keep both ends at -inf."""
    interval = Interval(-np.inf, -np.inf, 8, "bootstrap", 0.95)
    verdict = on_interval(interval, Gate(low=0.03))
    document = claims_document("p", "default", "c", [Claim("C2", "s", "p", -0.09, 0.03, verdict)])
    written = json.loads(json.dumps(document, allow_nan=False))
    assert written["claims"][0]["interval"]["low"] == written["claims"][0]["interval"]["high"] == "-inf"
    assert verdict.word == "fail" and claims_rows(written)[0][4] == "-0.09 [-inf, -inf]"
    assert _shape_problem(written) is None
    assert _shape_problem({**written, "claims": [{**written["claims"][0], "interval": {"low": "minus", "high": 1}}]})


def test_t_and_median_intervals():
    found = t_interval([1.0, 2.0, 3.0, 4.0], "seeds")
    assert found.low < 2.5 < found.high and found.n == 4 and "t-interval" in found.method
    timing = median_interval(range(1, 10), "repeats")
    assert (timing.low, timing.high) == (2.0, 8.0)  # x(2), x(8) of 9: coverage 96%
    with pytest.raises(ValueError, match="at least 9 repeats"):
        median_interval(range(8), "repeats")


def test_timings_decide_on_nine_repeats_or_more():
    assert on_timings([1.0] * 8, Gate(high=2.0), "repeats").word == "inconclusive"
    assert on_timings([1.0] * 9, Gate(high=2.0), "repeats").word == "pass"
    assert on_timings([3.0] * 9, Gate(high=2.0), "repeats").word == "fail"


def test_a_claim_of_parts_holds_where_every_part_holds():
    yes, no = Verdict("pass", "a", interval(1, 2)), Verdict("fail", "b", interval(3, 4))
    maybe = Verdict("inconclusive", "c", interval(5, 6))
    assert all_hold({"x": yes, "y": yes}).word == "pass"
    assert all_hold({"x": yes, "y": no}).word == "fail" and all_hold({"x": no, "y": maybe}).word == "fail"
    both = all_hold({"x": yes, "y": maybe})
    assert both.word == "inconclusive" and both.interval == yes.interval and both.reason == "x: a; y: c"
    name, verdict = worst_part({"x": yes, "y": maybe, "z": no})
    assert name == "z" and verdict.word == "fail" and verdict.interval == no.interval
    assert verdict.reason.startswith("z decides (1 of 3 parts pass)")
    assert worst_part({"x": yes, "y": maybe})[0] == "y" and worst_part({"x": yes, "y": yes})[0] == "x"


def test_metrics_json_keeps_the_interval_and_the_pass_flag():
    claim = Claim("C1", "s", "p", 1.3, 1.15, on_interval(interval(1.2, 1.4), Gate(low=1.15)))
    assert headline_metrics([claim]) == {"C1": 1.3, "C1.low": 1.2, "C1.high": 1.4, "C1.pass": 1}
