"""The sps_safe claim checks C1-C3 (spec §6) on hand-made summaries: each decided on a paired bootstrap over seeds
(pass, fail, inconclusive; undecided in smoke or where a setting was not run); C1's statistics over seeds."""
from __future__ import annotations

import numpy as np
import pytest

from flows.sps_safe.claims import C1Sample, claims, grid_pick
from flows.sps_safe.summaries import initial_values, last_k, summarize_problem


TIGHT = np.array([0.98, 0.99, 1.0, 1.01, 1.02])  # a per-seed factor of mean 1: a tight sample
WIDE = np.array([0.2, 0.6, 1.0, 1.4, 1.8])  # a noisy one


def _row(rule, param, final, lam=0.0, median=None, last=None, spread=TIGHT):
    return {"rule": rule, "param": param, "c": 1.0, "lam": lam, "final_mean": final, "last_k": 1,
            "final_median": final if median is None else median, "last_k_mean": final if last is None else last,
            "final_by_seed": final * spread}


def p1_rows(safe=5e-4, ima=5.2e-4, safe_spread=TIGHT):
    """P1 with best SGD 1e-3 and best SPS_max 3e-4: C1's bound is min(1e-3, 2 x 3e-4) = 6e-4."""
    return {"sgd_lo": _row("sgd", 0.01, 2e-3), "sgd_hi": _row("sgd", 0.03, 1e-3), "max": _row("sps_max", 1.0, 3e-4),
            "max_hi": _row("sps_max", 10.0, 9e-4), "safe": _row("sps_safe", 1.0, safe, spread=safe_spread),
            "ima": _row("ima_sps_safe", 1.0, ima, lam=9.0)}


def p2_rows(by_M=(0.4, 0.3, 0.2), spreads=(TIGHT, TIGHT, TIGHT), ima=1.0, ima_spread=TIGHT):
    """P2: SPS_safe's mean at M = 10, 100, 1000; IMA-SPS_safe at `ima` x it."""
    Ms = (10.0, 100.0, 1000.0)
    rows = {f"s{M:g}": _row("sps_safe", M, v, spread=spread) for M, v, spread in zip(Ms, by_M, spreads)}
    return rows | {f"i{M:g}": _row("ima_sps_safe", M, ima * v, lam=9.0, spread=ima_spread) for M, v in zip(Ms, by_M)}


def test_c1_decides_on_the_ratio_to_the_best_tuned_baseline():
    clear, outside, straddle = (claims(p1_rows(safe=safe, safe_spread=spread), p2_rows(), decide=True)[0]
                                for safe, spread in ((5e-4, TIGHT), (7e-4, TIGHT), (6e-4, WIDE)))
    assert clear.verdict.word == "pass" and clear.ours == pytest.approx(5 / 6) and clear.threshold == 1.0
    assert clear.details["bound"] == pytest.approx(6e-4) and clear.verdict.interval.high < 1.0
    assert outside.verdict.word == "fail" and outside.verdict.interval.low > 1.0  # 7e-4 > 2 x 3e-4
    assert straddle.verdict.word == "inconclusive"
    assert straddle.verdict.interval.low < 1.0 < straddle.verdict.interval.high
    assert set(clear.details["final_by_seed"]) == {"safe", "sgd_lo", "sgd_hi", "max", "max_hi"}


def test_c1_picks_the_best_grid_points_again_in_every_resample():
    # over all seeds sgd_lo is the best SGD, seed 0 alone makes sgd_hi the best: the ratio follows the resample's pick
    final = np.array([[1.0, 5.0, 0.5, 10.0], [1.0, 1.0, 4.0, 10.0], [1.0, 1.0, 4.0, 10.0]])
    sample = C1Sample(["safe", "sgd_lo", "sgd_hi", "max"], final, slice(1, 3), slice(3, 4))
    assert sample.ratio() == pytest.approx(1.0 / (7 / 3))
    assert sample.ratio(final[[1, 2, 1]]) == pytest.approx(1.0)
    assert sample.ratio(final[[0, 0, 0]]) == pytest.approx(2.0)


def test_c2_needs_the_value_ratio_and_monotonicity_in_M():
    clear = claims(p1_rows(), p2_rows(), decide=True)[1]
    assert clear.verdict.word == "pass" and clear.ours == pytest.approx(0.5) and clear.threshold == 0.8
    assert clear.details["final_by_seed"]["1000"] == pytest.approx((0.2 * TIGHT).tolist())
    too_high = claims(p1_rows(), p2_rows(by_M=(0.4, 0.38, 0.36)), decide=True)[1]
    assert too_high.verdict.word == "fail" and too_high.verdict.reason.startswith("value(M = 1000)")
    bump = claims(p1_rows(), p2_rows(by_M=(0.4, 0.1, 0.2)), decide=True)[1]  # ratio 0.5, but up from M 100 to 1000
    assert bump.verdict.word == "fail" and bump.verdict.reason.startswith("non-increasing in M")
    noisy = claims(p1_rows(), p2_rows(by_M=(0.4, 0.35, 0.32), spreads=(TIGHT, TIGHT, WIDE)), decide=True)[1]
    assert noisy.verdict.word == "inconclusive" and noisy.verdict.interval.low < 0.8 < noisy.verdict.interval.high


def test_c3_holds_at_every_setting_or_not():
    clear = claims(p1_rows(), p2_rows(ima=1.02), decide=True)[2]
    assert clear.verdict.word == "pass" and clear.ours == pytest.approx(1.04) and clear.threshold == 1.1
    assert clear.details["deciding_setting"] == "svm_interp.M1" and "4 of 4 parts pass" in clear.verdict.reason
    worse = claims(p1_rows(), p2_rows(ima=1.3), decide=True)[2]
    assert worse.verdict.word == "fail" and worse.ours == pytest.approx(1.3) and worse.verdict.interval.low > 1.1
    straddle = claims(p1_rows(), p2_rows(ima=1.1, ima_spread=WIDE), decide=True)[2]
    assert straddle.verdict.word == "inconclusive" and straddle.details["deciding_setting"].startswith("svm_noisy")


def test_smoke_and_settings_not_run_leave_the_claims_undecided():
    assert [c.verdict.word for c in claims(p1_rows(), p2_rows(), decide=False)] == ["undecided"] * 3
    p2 = {label: row for label, row in p2_rows().items() if row["param"] != 100.0}  # as the smoke profile runs P2
    c1, c2, c3 = claims(p1_rows(), p2, decide=True)
    assert c1.verdict.word == "pass" and c2.ours == pytest.approx(0.5)
    assert c2.verdict.word == c3.verdict.word == "undecided" and "not run in this profile" in c3.verdict.reason


def test_c1_is_decided_by_the_mean_and_shows_the_median_and_the_last_epochs():
    p1 = {"sgd_lo": _row("sgd", 0.01, 2e-3), "sgd_hi": _row("sgd", 0.03, 1e-3, median=9e-4),
          "max": _row("sps_max", 1.0, 3e-4, median=5e-4, last=2e-4), "safe": _row("sps_safe", 1.0, 7e-4, median=4e-4),
          "safe10": _row("sps_safe", 10.0, 9e-4)}
    c1 = claims(p1, {}, decide=True, p1_f_x0=[0.3, 20.0])[0]
    assert c1.passed is False and c1.details["verdict_statistic"] == "mean"  # 7e-4 > 2 x 3e-4
    by = c1.details["by_statistic"]
    assert by["mean"]["holds"] is False and by["median"]["holds"] is True  # 4e-4 <= min(9e-4, 1e-3)
    assert by["median"]["best_sgd_label"] == "sgd_hi" and by["last_k_mean"]["threshold"] == pytest.approx(4e-4)
    assert c1.details["f_x0_by_seed"] == [0.3, 20.0]
    grids = c1.details["grids"]
    assert {k: v for k, v in grids["sgd"].items() if k != "by_statistic"} == {
        "grid": [0.01, 0.03], "pick": 0.03, "pick_label": "sgd_hi", "value": 1e-3, "at_edge": "top"}
    assert grids["sgd"]["by_statistic"]["median"] == {"pick": 0.03, "value": 9e-4, "at_edge": "top"}
    assert grids["sps_max"]["at_edge"] == "single point" and grids["sps_safe"]["at_edge"] == "bottom"
    assert c1.details["calibration"] is None  # no record given


def test_ties_go_to_the_smaller_parameter_as_in_the_calibration_rule():
    p1 = {"sps_max_gamma_b1000_c1": _row("sps_max", 1000.0, 2e-4), "sps_max_gamma_b100_c1": _row("sps_max", 100.0, 2e-4),
          "sps_max_gamma_b10_c1": _row("sps_max", 10.0, 3e-4), "nan": _row("sps_max", 1e4, float("nan"))}
    assert grid_pick(p1, "sps_max", "final_mean")["pick"] == 100.0
    assert grid_pick({"x": _row("sgd", 1.0, float("inf"))}, "sgd", "final_mean") == {}


def test_grid_pick_says_where_the_best_point_lies():
    summary = {f"g{v}": _row("sgd", v, f) for v, f in ((1.0, 3.0), (2.0, 1.0), (4.0, 2.0))}
    assert grid_pick(summary, "sgd", "final_mean")["at_edge"] is None
    summary["g1.0"]["final_mean"] = 0.5
    assert grid_pick(summary, "sgd", "final_mean")["at_edge"] == "bottom"
    assert grid_pick(summary, "sps_max", "final_mean") == {}


def test_summaries_over_seeds_and_the_last_k_epochs():
    assert [last_k(e) for e in (1, 5, 10, 11, 50, 100)] == [1, 1, 1, 2, 5, 10]
    curves = [np.array([[1.0, 0.5, 0.4, 0.2]]), np.array([[1.0, 0.9, 0.8, 0.6]]), np.array([[1.0, 0.1, 0.1, 0.1]])]
    runs = [{"methods": [{"rule": "sgd", "param": 0.1, "c": 1.0, "lam": 0.0}], "labels": ["sgd_gamma0.1"],
             "rel_subopt": c, "objective": 4.0 * c + k, "safeguard_fraction": np.array([np.nan]),
             "zero_grad_steps": np.array([0])} for k, c in enumerate(curves)]
    row = summarize_problem(runs)["sgd_gamma0.1"]
    assert row["final_mean"] == pytest.approx(0.3) and row["final_median"] == pytest.approx(0.2) and row["last_k"] == 1
    assert row["last_k_mean"] == row["final_mean"] and row["final_by_seed"].tolist() == [0.2, 0.6, 0.1]
    assert initial_values(runs) == [4.0, 5.0, 6.0]


def test_the_last_k_average_covers_the_last_tenth_of_the_epochs():
    curve = np.concatenate([[1.0], np.linspace(0.9, 0.0, 11)])[None]  # 11 epochs: k = 2, the last two 0.09, 0.0
    run = {"methods": [{"rule": "sgd", "param": 0.1, "c": 1.0, "lam": 0.0}], "labels": ["s"], "rel_subopt": curve,
           "safeguard_fraction": np.array([np.nan]), "zero_grad_steps": np.array([0])}
    row = summarize_problem([run])["s"]
    assert row["last_k"] == 2 and row["last_k_mean"] == pytest.approx(0.045)
