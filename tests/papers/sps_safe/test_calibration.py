"""C1's tuned grids widened at an edge (flows/sps_safe/calibration.py): the shared rule with the verdict statistic
as the loss, added points as their own sweeps, folded into the seed's sweep without touching its rows."""
from __future__ import annotations

import json
from dataclasses import asdict

import numpy as np
import pytest

from flows.sps_safe import calibration
from flows.sps_safe.claims import C1_STATISTICS, C1_VERDICT, claims
from flows.sps_safe.params import P1, TUNED, Params
from tasks.core.params import PROFILES, profile_values
from tests.conftest import ROOT
from flows.sps_safe.pipeline import tuned_method
from flows.sps_safe.summaries import summarize_problem
from flows.sps_safe.sweep import HingeSVM, Method, run_sweep



def test_the_loss_is_the_verdict_statistic():
    assert C1_STATISTICS[C1_VERDICT] == calibration.LOSS_FIELD and TUNED[P1] == ("sgd", "sps_max")


def test_initial_points_come_from_the_main_sweep_and_only_added_points_run():
    curve = {0.001: 3.0, 0.003: 2.0, 0.01: 1.5, 0.03: 1.0, 0.09: 0.8, 0.27: 0.9}  # sgd: best 0.09 after one step
    flat = {1.0: 2.0, 10.0: 1.0}  # sps_max: 100 ties 10, so 10 (the smaller) is interior
    ran = []

    def run_points(points):
        ran.append(points)
        return [curve[v] if rule == "sgd" else 1.0 for rule, v in points]

    known = {("sgd", v): curve[v] for v in (0.001, 0.003, 0.01, 0.03)} | {("sps_max", v): flat[v] for v in flat}
    results = calibration.widen({"sgd": [0.001, 0.003, 0.01, 0.03], "sps_max": [1.0, 10.0]}, known, run_points)
    assert ran == [[("sgd", 0.09), ("sps_max", 100.0)], [("sgd", 0.27)]]
    sgd, sps_max = results["sgd"], results["sps_max"]
    assert (sgd.best_lr, sgd.edge, sgd.extensions, calibration.added_points(sgd)) == (0.09, None, 2, [0.09, 0.27])
    assert (sps_max.best_lr, sps_max.edge, sps_max.extensions) == (10.0, None, 1)
    labels = {("sgd", 0.09): "g9", ("sgd", 0.27): "g27", ("sps_max", 100.0): "m100"}
    record = json.loads(json.dumps(calibration.record(results, labels, seeds=5)))
    assert record["seeds"] == 5 and record["rules"]["sgd"]["added_runs"] == ["g9", "g27"]
    assert record["rules"]["sgd"]["grid"] == {str(v): curve[v] for v in sorted(curve)}
    assert record["rules"]["sgd"]["initial_grid"] == [0.001, 0.003, 0.01, 0.03]
    assert calibration.added_labels(record) == ["g9", "g27", "m100"] and calibration.added_labels(None) == []
    metrics = calibration.metrics(results, P1)
    assert metrics["calibration.svm_interp.sgd.best_lr"] == 0.09 and metrics["calibration.svm_interp.sps_max.extensions"] == 1


def test_one_point_grids_pass_through_without_a_run():
    results = calibration.widen({"sgd": [0.01], "sps_max": [1.0]}, {("sgd", 0.01): 0.5, ("sps_max", 1.0): 0.7},
                                lambda points: pytest.fail(f"ran {points}"))
    assert [(r.best_lr, r.edge, r.extensions) for r in results.values()] == [(0.01, None, 0), (1.0, None, 0)]


def test_the_tuned_grids_share_one_shape_and_are_sorted():
    profiles = {profile: profile_values(ROOT, "sps_safe", profile) for profile in PROFILES}
    for values in profiles.values():
        g = Params(**values).svm_interp
        assert len(g.sgd) == len(g.sps_max)
    broken = profiles["default"] | {"svm_interp": profiles["default"]["svm_interp"] | {"sgd": [0.01, 0.03]}}
    with pytest.raises(ValueError, match="same number of points"):
        Params(**broken)
    broken["svm_interp"] = profiles["default"]["svm_interp"] | {"sps_max": [10.0, 0.01, 0.1, 1.0]}
    with pytest.raises(ValueError, match="strictly increasing"):
        Params(**broken)


def _sweep(problem, sweep, seed):
    result = run_sweep(problem, sweep, x0=np.zeros(problem.A.shape[1]), f_star=0.0, epochs=3, batch=2, seed=seed,
                       trace_points=10)
    return asdict(result) | {"methods": [m.model_dump() for m in sweep], "sampling_seed": seed}


def test_added_sweeps_fold_in_and_leave_the_main_rows_bit_identical():
    """The solve stage's widening and the evaluate stage's fold, on a small problem with two seeds."""
    rng = np.random.default_rng(0)
    A = rng.normal(size=(40, 5)) + 1.0
    problem = HingeSVM(A, np.sign(A @ rng.normal(size=5)))
    g = Params(**profile_values(ROOT, "sps_safe", "smoke")).svm_interp
    main = [tuned_method(g, "sgd", 0.01), tuned_method(g, "sgd", 0.03), tuned_method(g, "sps_max", 1.0),
            Method(rule="sps_safe", param=1.0)]
    seeds = [11, 12]
    runs = [_sweep(problem, main, s) for s in seeds]
    known = {(m.rule, m.param): calibration.grid_loss([run["rel_subopt"][r, -1] for run in runs])
             for r, m in enumerate(main) if m.rule != "sps_safe"}
    extras = [[] for _ in seeds]

    def run_points(points):
        losses = []
        for point in points:
            per_seed = [_sweep(problem, [tuned_method(g, *point)], s) for s in seeds]
            for more, run in zip(extras, per_seed):
                more.append(run)
            losses.append(calibration.grid_loss([run["rel_subopt"][0, -1] for run in per_seed]))
        return losses

    results = calibration.widen({"sgd": [0.01, 0.03], "sps_max": [1.0]}, known, run_points)
    assert results["sgd"].extensions >= 1 and results["sps_max"].extensions == 0  # (the larger steps win here)
    merged = [calibration.merge_runs(run, more) for run, more in zip(runs, extras)]
    assert calibration.merge_runs(runs[0], []) is runs[0]
    sgd_labels = [label for label in merged[0]["labels"] if label.startswith("sgd")]
    assert sgd_labels == [tuned_method(g, "sgd", v).label for v in sorted(results["sgd"].losses)]
    assert merged[0]["labels"][len(sgd_labels):] == ["sps_max_gamma_b1_c1", "sps_safe_M1"]
    before, after = summarize_problem(runs), summarize_problem(merged)
    for label, row in before.items():  # every main row's numbers, bit for bit
        assert after[label]["final_mean"] == row["final_mean"] and after[label]["last_k_mean"] == row["last_k_mean"]
        np.testing.assert_array_equal(after[label]["mean"], row["mean"])
    for v, loss in results["sgd"].losses.items():  # the solve stage's loss is the summary's verdict statistic
        assert after[tuned_method(g, "sgd", v).label]["final_mean"] == loss
    labels = {(rule, v): tuned_method(g, rule, v).label for rule, result in results.items() for v in result.losses}
    record = calibration.record(results, labels, len(seeds))
    assert calibration.added_labels(record) == [m["labels"][0] for m in extras[0]]
    c1 = claims(after, {}, decide=False, p1_calibration=record)[0]
    grids = c1.details["grids"]
    for rule, result in results.items():
        assert grids[rule]["grid"] == list(result.losses) and grids[rule]["pick"] == result.best_lr
        assert grids[rule]["value"] == result.losses[result.best_lr] and set(grids[rule]["by_statistic"]) == set(C1_STATISTICS)
    assert c1.details["best_sgd_label"] == tuned_method(g, "sgd", results["sgd"].best_lr).label
    assert c1.details["calibration"] is record


def test_an_added_sweep_on_other_indices_is_refused():
    rng = np.random.default_rng(1)
    A = rng.normal(size=(20, 3)) + 1.0
    problem = HingeSVM(A, np.sign(A @ rng.normal(size=3)))
    run, other = _sweep(problem, [Method(rule="sgd", param=0.01)], 1), _sweep(problem, [Method(rule="sgd", param=0.03)], 2)
    with pytest.raises(ValueError, match="sample indices"):
        calibration.merge_runs(run, [other])
