"""SCIP solves with the sampling handler (spec §3.1, §4 baselines, §10 safety):
trajectories are monotone in minimization sense, the stopper never fires before an incumbent,
solution limits, read errors, handler overhead. Small MIS instances (about 0.3 s per solve)."""
from __future__ import annotations

from pathlib import Path
from time import process_time

import numpy as np
import pytest
from pyscipopt import Model

from tasks.mip.generators import generate
from tasks.mip.solver import BOUNDS, MIPReadError, Sampler, configure, read_model, solve, write_solution
from tasks.mip.trajectory import COLUMNS, load_trajectory, save_trajectory

SMOKE_MIS = {"n_min": 50, "n_max": 60, "p": 0.12}
TOL = 1e-6


@pytest.fixture(scope="module")
def instances(tmp_path_factory) -> list[Path]:
    root = tmp_path_factory.mktemp("mis")
    paths = [root / f"mis_{seed}.mps" for seed in range(3)]
    for seed, path in enumerate(paths):
        generate("mis", SMOKE_MIS, seed, path)
    return paths


@pytest.fixture(scope="module")
def mis90(tmp_path_factory) -> Path:
    """The default profile's size (spec §6): about 1 s per solve here."""
    path = tmp_path_factory.mktemp("mis90") / "mis90.mps"
    generate("mis", {"n_min": 85, "n_max": 95, "p": 0.1}, 0, path)
    return path


@pytest.fixture(scope="module")
def full_solves(instances):
    return [solve(p, family="mis", bound=BOUNDS["mis"], seed_shift=i) for i, p in enumerate(instances)]


def assert_monotone(tr) -> None:
    assert (np.diff(tr.ub) <= TOL).all(), "incumbent got worse"
    assert (np.diff(tr.lb) >= -TOL).all(), "dual bound got worse"
    assert (tr.ub >= tr.lb - TOL).all()
    assert (np.abs(tr.lb) <= tr.bound).all() and (np.abs(tr.ub) <= tr.bound).all()
    assert (np.diff(tr.nsols) >= 0).all() and (np.diff(tr.nodes) >= 0).all() and (np.diff(tr.lp_iters) >= 0).all()
    assert (np.diff(tr.t) >= -TOL).all() and (np.diff(tr.wall) >= -TOL).all()


def test_full_solve_trajectory(full_solves):
    for tr, model in full_solves:
        assert tr.status in {"optimal", "gaplimit"} and tr.proved
        assert tr.sense == -1 and tr.family == "mis" and tr.bound == BOUNDS["mis"]
        assert_monotone(tr)
        assert tr.final_ub == -model.getObjVal() == tr.ub[-1]
        assert (tr.y >= 0).all() and tr.y[-1] == 0 and (np.diff(tr.y) <= TOL).all()
        assert len(tr) >= 5 and all(len(getattr(tr, c)) == len(tr) for c in COLUMNS)
        assert tr.info["stopped_at"] is None and tr.info["n_vars"] == model.getNVars()
        assert tr.wall[-1] == tr.solve_time and tr.t[-1] <= tr.wall[-1] + 0.01
        assert 0 < tr.overhead < tr.solve_time


def test_minimization_family(tmp_path):
    """Minimization problems keep their sign; U = getObjVal at the end."""
    path = tmp_path / "mvc.mps"
    generate("mvc", {"n": 60, "m_attach": 3}, 0, path)
    tr, model = solve(path, family="mvc", bound=BOUNDS["mvc"])
    assert tr.sense == 1 and tr.status in {"optimal", "gaplimit"}
    assert_monotone(tr)
    assert tr.final_ub == pytest.approx(model.getObjVal()) and tr.y[-1] == 0


def test_bounds_clipped_before_they_exist(instances):
    """SCIP's +-1e20 must read as +-B (spec §11); a small B clips the real bounds too."""
    tr, _ = solve(instances[0], family="mis", bound=BOUNDS["mis"], sample_dt=0.0)
    assert tr.lb[0] == -BOUNDS["mis"]
    small, _ = solve(instances[0], family="mis", bound=5.0, sample_dt=0.0)
    assert (np.abs(small.lb) <= 5.0).all() and (np.abs(small.ub) <= 5.0).all() and small.final_ub == -5.0


def test_stopper_at_first_incumbent(instances):
    seen = []

    def first_incumbent(rows):
        seen.append(int(rows["nsols"][-1]))
        return True

    tr, model = solve(instances[0], family="mis", bound=BOUNDS["mis"], stopper=first_incumbent)
    k = tr.info["stopped_at"]
    assert tr.status == "userinterrupt"
    assert seen == [tr.nsols[k]] and seen[0] >= 1
    assert k == int(np.argmax(tr.nsols >= 1)) and (tr.nsols[:k] == 0).all()
    assert len(tr) == k + 2  # no rows after the stop but the final state
    assert tr.final_ub == -model.getObjVal()


def test_stopper_never_sees_rows_without_incumbent(instances, full_solves):
    """A rule that never fires is called only once an incumbent exists and returns the solver's
    own 1e-4 solution (spec §10 safety)."""
    calls = []

    def never(rows):
        assert not rows["nsols"].flags.writeable
        calls.append(len(rows["t"]))
        assert rows["nsols"][-1] >= 1 and rows["ub"][-1] < BOUNDS["mis"]
        return False

    tr, _ = solve(instances[1], family="mis", bound=BOUNDS["mis"], seed_shift=1, stopper=never)
    assert tr.status in {"optimal", "gaplimit"} and tr.info["stopped_at"] is None
    assert calls == sorted(calls) and calls[-1] == len(tr) - 1
    assert tr.final_ub == full_solves[1][0].final_ub


def test_stopper_error_is_raised(instances):
    def broken(rows):
        raise RuntimeError("stopper broke")

    with pytest.raises(RuntimeError, match="stopper broke"):
        solve(instances[0], family="mis", bound=BOUNDS["mis"], stopper=broken)


@pytest.mark.parametrize("limit", [1, 3])
def test_best_sol_limit(instances, limit):
    """Baselines "solution limit 1/3" (spec §4): stop at the limit-th improving solution, unless
    the solve proves optimality first (small instances may have fewer improvements)."""
    tr, model = solve(instances[2], family="mis", bound=BOUNDS["mis"], best_sol_limit=limit)
    if limit == 1:
        assert model.getNBestSolsFound() == 1 and tr.status == "bestsollimit"
    assert tr.status in {"bestsollimit", "optimal", "gaplimit"}
    assert model.getNBestSolsFound() == limit if tr.status == "bestsollimit" else model.getNBestSolsFound() < limit
    assert tr.final_ub == -model.getObjVal()
    assert len(np.unique(tr.ub[tr.ub < BOUNDS["mis"]])) == model.getNBestSolsFound()


def test_bad_best_sol_limit(instances):
    with pytest.raises(ValueError, match="best_sol_limit"):
        solve(instances[0], family="mis", bound=BOUNDS["mis"], best_sol_limit=0)


@pytest.mark.heavy  # two full solves: ~2 s
def test_throttle(mis90):
    """sample_dt large: only incumbents, the first event and the final row; sample_dt 0: every event."""
    sparse, model = solve(mis90, family="mis", bound=BOUNDS["mis"], sample_dt=100.0)
    dense, _ = solve(mis90, family="mis", bound=BOUNDS["mis"], sample_dt=0.0)
    assert len(sparse) <= model.getNBestSolsFound() + 2
    assert len(dense) > 2 * len(sparse)
    assert_monotone(sparse)
    assert_monotone(dense)


def test_unreadable_file(tmp_path):
    bad = tmp_path / "broken_instance.mps"
    bad.write_text("this is not an MPS file\n")
    with pytest.raises(MIPReadError, match="broken_instance.mps") as info:
        solve(bad, family="mis", bound=BOUNDS["mis"])
    assert isinstance(info.value, ValueError) and "ERROR" in str(info.value)
    with pytest.raises(MIPReadError, match="missing.mps"):
        read_model(tmp_path / "missing.mps")


def test_write_solution(full_solves, tmp_path):
    _, model = full_solves[0]
    write_solution(model, tmp_path / "best.sol")
    text = (tmp_path / "best.sol").read_text()
    assert float(text.splitlines()[0].split(":")[1]) == model.getObjVal()
    assert sum(1 for line in text.splitlines()[1:] if line.strip()) == model.getNVars()
    with pytest.raises(ValueError, match="no solution"):
        write_solution(Model(), tmp_path / "none.sol")


def test_configure_sets_spec_params():
    model = configure(Model(), gap=1e-3, time_limit=7.0, node_limit=300, seed_shift=5)
    assert model.getParam("limits/gap") == 1e-3 and model.getParam("limits/time") == 7.0
    assert model.getParam("limits/nodes") == 300
    assert model.getParam("timing/clocktype") == 1, "the time limit is CPU time: load does not move it"
    assert model.getParam("randomization/randomseedshift") == 5
    assert model.getParam("presolving/maxrounds") == 0 and model.getParam("lp/threads") == 1
    assert configure(Model()).getParam("limits/nodes") == -1, "no node limit unless asked"
    for bad in ({"gap": -1.0}, {"time_limit": 0.0}, {"node_limit": 0}, {"node_limit": 2.5}, {"seed_shift": -1}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            configure(Model(), **bad)


def test_a_node_limit_ends_the_solve_unproved_the_same_way_every_time(tmp_path):
    path = tmp_path / "mis.mps"
    generate("mis", {"n_min": 75, "n_max": 80, "p": 0.1}, 1, path)  # 15 B&B nodes to optimality
    limited = [solve(path, family="mis", bound=BOUNDS["mis"], node_limit=2)[0] for _ in range(2)]
    assert [t.status for t in limited] == ["nodelimit"] * 2 and not limited[0].proved
    assert limited[0].final_ub == limited[1].final_ub and limited[0].nodes[-1] == limited[1].nodes[-1] == 2


def test_the_feature_clock_is_cpu_time(instances):
    start = process_time()
    tr, _ = solve(instances[1], family="mis", bound=BOUNDS["mis"])
    assert tr.proved and 0.0 <= tr.t[-1] <= process_time() - start


def test_sampler_checks_inputs():
    with pytest.raises(ValueError, match="bound"):
        Sampler(0.0)
    with pytest.raises(ValueError, match="sample_dt"):
        Sampler(1.0, sample_dt=-1.0)


def test_trajectory_save_load(full_solves, tmp_path):
    tr, _ = full_solves[0]
    save_trajectory(tmp_path / "t.npz", tr)
    back = load_trajectory(tmp_path / "t.npz")
    assert back.status == tr.status and back.info == tr.info
    for c in COLUMNS:
        np.testing.assert_array_equal(getattr(back, c), getattr(tr, c))


def test_same_seed_same_answer(instances, full_solves):
    again, _ = solve(instances[0], family="mis", bound=BOUNDS["mis"], seed_shift=0)
    assert again.final_ub == full_solves[0][0].final_ub


def test_handler_overhead_fraction(mis90):
    """Spec target: the sampler costs < 5 % of the solve at Delta_s = 0.02 (MIS n ~ 90, p = 0.1)."""
    tr, _ = solve(mis90, family="mis", bound=BOUNDS["mis"], sample_dt=0.02)
    fraction = tr.overhead / tr.solve_time
    print(f"\nhandler overhead {tr.overhead * 1e3:.2f} ms of {tr.solve_time:.3f} s = {fraction:.2%}, {len(tr)} rows")
    assert fraction < 0.05


TWO_SOLVES = """
import sys
import torch  # loaded, as with a NetworkStopper: the GC's teardown order is what used to crash
from tasks.mip.solver import BOUNDS, solve
kept = [solve(sys.argv[1], family="mis", bound=BOUNDS["mis"], stopper=lambda rows: False) for _ in range(2)]
print(kept[-1][1].getStatus())
"""


@pytest.mark.heavy  # a child process with two solves: ~2.5 s
def test_two_solves_in_one_process_exit_cleanly(instances):
    """Models kept alive to interpreter exit (a user's script) are freed without a crash (was exit 139)."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", TWO_SOLVES, str(instances[0])], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0, (done.returncode, done.stderr[-500:])
    assert done.stdout.strip() in ("optimal", "gaplimit")
