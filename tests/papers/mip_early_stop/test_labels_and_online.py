"""Only solves SCIP proved optimal become labels (the rest are left out and counted per family and split), and the
online check judges where and when the online stopper stopped, not only what it returned (issue 42)."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from flows.mip_early_stop.pipeline import load_labels, resolve_online, unproved
from flows.mip_early_stop.replay import compare_online, status_as_expected, stop_time_tolerance
from tasks.mip.generators import generate
from tasks.mip.solver import BOUNDS
from tasks.mip.trajectory import PROVED, Trajectory, save_trajectory
from tests.papers.mip_early_stop.test_cli_inputs import stopper_bundle


def trajectory(name: str, status: str, rows: int = 6) -> Trajectory:
    t = np.linspace(0.0, 1.0, rows)
    ub = np.linspace(-20.0, -30.0, rows)
    return Trajectory(instance=name, family="mis", sense=-1, bound=1e4, t=t, wall=2 * t, lb=np.full(rows, -31.0), ub=ub,
                      nsols=np.ones(rows, dtype=int), nodes=np.arange(rows), lp_iters=np.arange(rows),
                      final_ub=float(ub[-1]), solve_time=2.0, status=status)


def test_only_proved_statuses_are_labels():
    assert PROVED == ("optimal", "gaplimit")
    for status in ("timelimit", "nodelimit", "userinterrupt", "bestsollimit", "memlimit", "infeasible"):
        assert not trajectory("x", status).proved, status
    assert trajectory("x", "optimal").proved and trajectory("x", "gaplimit").proved


def test_unproved_solves_are_left_out_and_counted_per_family_and_split(tmp_path: Path):
    folder = tmp_path / "mis" / "cal"
    folder.mkdir(parents=True)
    for name, status in (("a", "optimal"), ("b", "timelimit"), ("c", "gaplimit"), ("d", "nodelimit")):
        save_trajectory(folder / f"{name}.npz", trajectory(name, status))
    assert [t.instance for t in load_labels(tmp_path, "mis", "cal")] == ["a", "c"]

    done = [{"family": "mis", "split": "cal", "instance": "b", "status": "timelimit"},
            {"family": "mis", "split": "cal", "instance": "a", "status": "optimal"},
            {"family": "mis", "split": "test", "instance": "e", "status": "gaplimit"},
            {"family": "gisp", "split": "train", "instance": "f", "status": "nodelimit"},
            {"instance": "e", "status": "bestsollimit"}]  # a solution-limit baseline: never a label, not counted
    assert unproved(done) == {"mis": {"cal": {"b": "timelimit"}, "test": {}}, "gisp": {"train": {"f": "nodelimit"}}}


def test_a_split_without_a_proved_solve_stops_the_stage_with_a_reason(tmp_path: Path):
    folder = tmp_path / "gisp" / "test"
    folder.mkdir(parents=True)
    save_trajectory(folder / "a.npz", trajectory("a", "timelimit"))
    with pytest.raises(RuntimeError, match=r"gisp test: SCIP proved none of its 1 solves.*timelimit"):
        load_labels(tmp_path, "gisp", "test")


def online_run(**changes) -> dict:
    run = {"family": "mis", "instance": "a", "objective": -28.0, "time": 1.0, "status": "userinterrupt", "fired": True,
           "stopped_at": 3, "rule_index": 3, "stop_t": 0.6}
    return run | changes


def replay_rows(index: int = 3, objective: float = -28.0, fired: bool = True) -> list[dict]:
    return [{"instance": "a", "rule": "network", "index": index, "objective": objective, "stopped_early": fired, "time": 1.2},
            {"instance": "a", "rule": "gap_rule", "index": 5, "objective": -30.0, "stopped_early": False, "time": 2.0}]


def compared(run: dict, rows: list[dict] | None = None) -> dict:
    return compare_online([run], rows or replay_rows(), {"a": trajectory("a", "optimal")}, sample_dt=0.02)[0]


def test_the_online_check_agrees_only_on_the_same_stop_where_the_rule_fires_within_limits():
    same = compared(online_run())
    assert same["agree"] and same["stop_time_agrees"] and same["stops_where_rule_says"]
    assert same["replay_stop_t"] == pytest.approx(0.6)
    assert not compared(online_run(objective=-27.0))["agree"], "another objective"
    assert not compared(online_run(fired=False, stopped_at=None, rule_index=None, status="optimal"))["agree"], "fired once"
    elsewhere = compared(online_run(rule_index=2))
    assert not elsewhere["agree"] and not elsewhere["stops_where_rule_says"], "the rule fired a row earlier than it stopped"
    assert not compared(online_run(status="optimal"))["agree"], "a stopped solve must end userinterrupt"
    never = online_run(fired=False, stopped_at=None, rule_index=None, objective=-30.0, stop_t=1.0, status="optimal")
    assert compared(never, replay_rows(index=5, objective=-30.0, fired=False))["agree"]
    for limit in ("nodelimit", "timelimit"):
        assert not compared(never | {"status": limit}, replay_rows(index=5, objective=-30.0, fired=False))["agree"], limit


def test_stop_times_are_judged_on_the_feature_clock_within_the_declared_tolerance():
    assert stop_time_tolerance(0.6, 0.02) == pytest.approx(0.06) and stop_time_tolerance(0.1, 0.02) == pytest.approx(0.04)
    assert compared(online_run(stop_t=0.6 + 0.059))["stop_time_agrees"]
    late = compared(online_run(stop_t=0.6 + 0.07))
    assert not late["stop_time_agrees"] and late["agree"], "timing noise is reported beside agree, not folded into it"


def test_status_as_expected():
    assert status_as_expected({"stopped_at": 4, "status": "userinterrupt"})
    assert status_as_expected({"stopped_at": None, "status": "gaplimit"})
    assert not status_as_expected({"stopped_at": None, "status": "timelimit"})


@pytest.fixture(scope="module")
def online_setup(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("online")
    mps = folder / "mis.mps"
    generate("mis", {"n_min": 75, "n_max": 80, "p": 0.1}, 1, mps)  # 15 nodes: eligible rows before SCIP finishes
    return folder, mps


@pytest.mark.heavy
@pytest.mark.parametrize("score, fires", [(1e9, True), (-1.0, False)])
def test_a_real_online_solve_stops_where_its_own_rows_say_and_ends_as_expected(online_setup, score, fires):
    folder, mps = online_setup
    bundle = stopper_bundle(folder / f"stopper_{fires}.pt", family="mis", eps_a=1.0, sample_dt=0.01, scores=[score] * 19,
                            alpha=0.1, quantile="finite", gap=1e-4, time_limit=30.0, node_limit=1000, bound=BOUNDS["mis"],
                            epsilon=1e-3, signature={"sense": [-1], "n_vars": [75, 80], "n_cons": [100, 600]})
    settings = {"gap": 1e-4, "time_limit": 30.0, "node_limit": 1000, "sample_dt": 0.01, "seed_shift": 0}
    run = resolve_online.fn(mps, "mis", bundle, settings)
    assert run["rule_index"] == run["stopped_at"], "the online stop is the rule's first firing row on its own rows"
    assert status_as_expected(run)
    assert (run["stopped_at"] is not None) == fires and run["fired"] == fires
    assert math.isfinite(run["stop_t"]) and 0.0 <= run["stop_t"] <= run["time"]

