"""The sps_safe claim checks C1-C3 (spec §6) on hand-made summaries, and C1's statistics over seeds."""
from __future__ import annotations

import numpy as np
import pytest

from flows.sps_safe.claims import claims, grid_pick
from flows.sps_safe.summaries import initial_values, last_k, summarize_problem


def _row(rule, param, final, lam=0.0, median=None, last=None):
    return {"rule": rule, "param": param, "c": 1.0, "lam": lam, "final_mean": final, "last_k": 1,
            "final_median": final if median is None else median, "last_k_mean": final if last is None else last,
            "final_by_seed": np.array([final])}


def test_claims_compare_as_the_spec_says():
    p1 = {"a": _row("sgd", 0.01, 1e-3), "b": _row("sps_max", 1.0, 3e-4), "c": _row("sps_safe", 1.0, 5e-4),
          "d": _row("ima_sps_safe", 1.0, 5.4e-4, lam=9.0)}
    p2 = {f"s{M}": _row("sps_safe", M, v) for M, v in ((10.0, 0.4), (100.0, 0.3), (1000.0, 0.3))}
    p2 |= {f"i{M}": _row("ima_sps_safe", M, 0.3, lam=9.0) for M in (10.0, 100.0, 1000.0)}
    c1, c2, c3 = claims(p1, p2, decide=True)
    assert c1.passed and c1.threshold == pytest.approx(6e-4)
    assert c2.passed and c2.ours == pytest.approx(0.75) and c2.details["monotone"]
    assert c3.passed and c3.ours == pytest.approx(1.08)
    p1["c"]["final_mean"] = 7e-4  # now worse than 2 x best SPS_max
    p2["s100.0"]["final_mean"] = 0.2  # ratio still 0.75, but not monotone in M
    p2["i1000.0"]["final_mean"] = 0.34  # 1.13 x SPS_safe
    c1, c2, c3 = claims(p1, p2, decide=True)
    assert (c1.passed, c2.passed, c3.passed) == (False, False, False)
    assert all(c.passed is None for c in claims(p1, p2, decide=False))


def test_c1_is_decided_by_the_mean_and_shows_the_median_and_the_last_epochs():
    p1 = {"sgd_lo": _row("sgd", 0.01, 2e-3), "sgd_hi": _row("sgd", 0.03, 1e-3, median=9e-4),
          "max": _row("sps_max", 1.0, 3e-4, median=5e-4, last=2e-4), "safe": _row("sps_safe", 1.0, 7e-4, median=4e-4),
          "safe10": _row("sps_safe", 10.0, 9e-4)}
    c1 = claims(p1, {}, decide=True, p1_f_x0=[0.3, 20.0])[0]
    assert c1.passed is False and c1.details["verdict_statistic"] == "mean"  # 7e-4 > 2 x 3e-4
    by = c1.details["by_statistic"]
    assert by["mean"]["holds"] is False and by["median"]["holds"] is True  # 4e-4 <= min(9e-4, 1e-3)
    assert by["median"]["best_sgd_label"] == "sgd_hi" and by["last_k_mean"]["threshold"] == pytest.approx(4e-4)
    assert c1.details["f_x0_by_seed"] == [0.3, 20.0] and set(c1.details["final_by_seed"]) == {"safe", "sgd_hi", "max"}
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
