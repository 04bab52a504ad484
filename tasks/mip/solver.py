"""SCIP solves that record the solver state as a Trajectory (spec §3.1, §4, §6).

`solve` reads an MPS file, applies the §6 settings (`configure`), and attaches a `Sampler`
event handler. The handler samples (t, wall, L, U, nsols, nodes, lp_iters) on LP solves,
node solves and new incumbents, at most once per `sample_dt` seconds of solver time but always
on a new incumbent, in minimization sense and clipped to [-B, B]. An optional `stopper` sees
the rows recorded so far and may interrupt the solve: that is how the learned rule of §3.7 and
the calibrated baselines of §4 run online. `best_sol_limit` gives the solution-limit baselines.
"""
from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from time import perf_counter, process_time

import numpy as np
from pyscipopt import SCIP_EVENTTYPE, SCIP_PARAMSETTING, Eventhdlr, Model

from tasks.mip.trajectory import COLUMNS, Trajectory

# B per family: replaces +-infinity (SCIP's +-1e20) before a bound exists. It must exceed
# |objective| of every feasible solution. mis/mvc/cflp/gisp are the code's values (spec §3.1);
# setcover (cost <= 100 * cols) and cauction (sum of all bid prices) are our choice, valid up
# to about 10^4 columns / 10^3 bids at the Gasse et al. sizes.
BOUNDS = {"mis": 1e4, "mvc": 1e4, "cflp": 1e6, "gisp": 5e8, "setcover": 1e6, "cauction": 1e6}

EVENTS = SCIP_EVENTTYPE.LPSOLVED | SCIP_EVENTTYPE.NODESOLVED | SCIP_EVENTTYPE.BESTSOLFOUND
DTYPES = {"t": np.float64, "wall": np.float64, "lb": np.float64, "ub": np.float64,
          "nsols": np.int64, "nodes": np.int64, "lp_iters": np.int64}

Stopper = Callable[[dict[str, np.ndarray]], bool]


class MIPReadError(ValueError):
    """SCIP could not read an instance file; the message names the file and quotes SCIP."""


def configure(model: Model, *, gap: float = 1e-4, time_limit: float = 30.0, node_limit: int | None = None,
              seed_shift: int = 0) -> Model:
    """Spec §6 settings, mirroring the paper's Gurobi runs (Presolve 0, Heuristics up, 1 thread).

    limits/gap is set explicitly because SCIP's default is 0 while the reference solver stops at
    1e-4. The limits do not depend on machine load: node_limit (limits/nodes, None for none)
    does not depend on the machine at all, and time_limit is in CPU seconds of this process
    (timing/clocktype 1), a backstop for a node that never ends. SCIP's solving time, the
    feature clock, is then CPU time too; the sampler measures its own overhead on the same clock.
    """
    if not gap >= 0.0:
        raise ValueError(f"gap must be >= 0, got {gap!r}")
    if not time_limit > 0.0:
        raise ValueError(f"time_limit must be > 0, got {time_limit!r}")
    if node_limit is not None and not (isinstance(node_limit, (int, np.integer)) and node_limit >= 1):
        raise ValueError(f"node_limit must be None or an integer >= 1, got {node_limit!r}")
    if not (isinstance(seed_shift, (int, np.integer)) and seed_shift >= 0):
        raise ValueError(f"seed_shift must be a non-negative integer, got {seed_shift!r}")
    model.hideOutput()
    model.setPresolve(SCIP_PARAMSETTING.OFF)
    model.setHeuristics(SCIP_PARAMSETTING.AGGRESSIVE)
    model.setParam("limits/gap", float(gap))
    model.setParam("limits/time", float(time_limit))
    if node_limit is not None:
        model.setParam("limits/nodes", int(node_limit))
    model.setParam("randomization/randomseedshift", int(seed_shift))
    model.setParam("lp/threads", 1)
    model.setParam("parallel/maxnthreads", 1)
    model.setParam("timing/clocktype", 1)  # CPU: load stretches wall time, not the CPU time a solve needs
    return model


class _Columns:
    """Append-only column store; `view` hands out read-only prefixes without copying, so a
    stopper that looks at all rows at every sample costs O(1) per call, not O(rows)."""

    def __init__(self, capacity: int = 256):
        self._data = {name: np.empty(capacity, dtype=DTYPES[name]) for name in COLUMNS}
        self.n = 0

    def append(self, row: dict) -> None:
        if self.n == len(self._data["t"]):
            self._data = {k: np.concatenate([v, np.empty_like(v)]) for k, v in self._data.items()}
        for name in COLUMNS:
            self._data[name][self.n] = row[name]
        self.n += 1

    def last(self, name: str):
        return self._data[name][self.n - 1]

    def view(self) -> dict[str, np.ndarray]:
        out = {}
        for name, column in self._data.items():
            out[name] = column[: self.n]
            out[name].flags.writeable = False
        return out

    def arrays(self) -> dict[str, np.ndarray]:
        return {name: column[: self.n].copy() for name, column in self._data.items()}


def to_min_sense(value: float, sign: int, bound: float) -> float:
    """A SCIP bound in minimization sense, clipped so "no bound yet" (+-1e20) reads as +-B."""
    return float(np.clip(sign * value, -bound, bound)) + 0.0  # + 0.0 turns -0.0 into 0.0


def incumbent(model: Model, sign: int, bound: float) -> float:
    """U in minimization sense. Inside a BESTSOLFOUND event SCIP has stored the new solution
    but not yet moved getPrimalbound() to it (checked on pyscipopt 6.3.0), so read the best
    solution's objective too and take the better of the two."""
    ub = to_min_sense(model.getPrimalbound(), sign, bound)
    if model.getNSols() > 0:
        ub = min(ub, to_min_sense(model.getSolObjVal(model.getBestSol()), sign, bound))
    return ub


class Sampler(Eventhdlr):
    """Samples the solver state during one solve; see the module docstring.

    `t` is SCIP's solving time (CPU seconds, see `configure`) minus the CPU time the handler spent
    (sampling and stopper), the feature clock of §3.1; `wall` is perf_counter time since `begin`,
    overhead included, what a user waits; `overhead` is the handler's wall time. The stopper is called after each recorded row once an
    incumbent exists (nsols >= 1); when it returns True the solve is interrupted and
    `stopped_at` is that row's index. An exception in the stopper interrupts the solve and is
    kept in `error` for the caller to re-raise (SCIP callbacks cannot propagate it).
    """

    def __init__(self, bound: float, sample_dt: float = 0.02, stopper: Stopper | None = None):
        if not bound > 0:
            raise ValueError(f"bound must be > 0, got {bound!r}")
        if not sample_dt >= 0:
            raise ValueError(f"sample_dt must be >= 0, got {sample_dt!r}")
        self.bound = float(bound)
        self.sample_dt = float(sample_dt)
        self.stopper = stopper
        self.begin()

    def begin(self) -> None:
        """Reset the rows and start the wall clock; call right before model.optimize()."""
        self.rows = _Columns()
        self.overhead = 0.0
        self.cpu_overhead = 0.0
        self.stopped_at: int | None = None
        self.error: BaseException | None = None
        self.n_events = 0
        self._last_sample = -np.inf
        self.t0 = perf_counter()

    def eventinit(self):
        self.sign = 1 if self.model.getObjectiveSense() == "minimize" else -1
        self.model.catchEvent(EVENTS, self)  # pyscipopt drops caught events itself on eventexit

    def eventexec(self, event):
        entry, cpu_entry = perf_counter(), process_time()
        try:
            self.n_events += 1
            if self.stopped_at is None and self.error is None:
                self._sample(event.getType() == SCIP_EVENTTYPE.BESTSOLFOUND, entry, cpu_entry)
        except Exception as exc:  # noqa: BLE001 - re-raised by solve() after optimize()
            self.error = exc
            self.model.interruptSolve()
        finally:
            self.overhead += perf_counter() - entry
            self.cpu_overhead += process_time() - cpu_entry

    def _sample(self, new_incumbent: bool, entry: float, cpu_entry: float) -> None:
        solver_time = self.model.getSolvingTime()
        if not new_incumbent and solver_time - self._last_sample < self.sample_dt:
            return
        self._last_sample = solver_time
        # this call's time so far is overhead too, though not yet in self.cpu_overhead
        self.rows.append(self.state(wall=perf_counter() - self.t0, solver_time=solver_time,
                                    pending=process_time() - cpu_entry))
        if self.stopper is not None and self.rows.last("nsols") >= 1 and self.stopper(self.rows.view()):
            self.stopped_at = self.rows.n - 1
            self.model.interruptSolve()

    def state(self, *, wall: float, solver_time: float | None = None, pending: float = 0.0) -> dict:
        """One row of the current solver state in minimization sense.

        t never decreases: SCIP's CPU clock and process_time differ by microseconds, and the two
        clocks' difference must not make the feature clock run backwards."""
        model, sign = self.model, self.sign
        if solver_time is None:
            solver_time = model.getSolvingTime()
        t = solver_time - self.cpu_overhead - pending
        if self.rows.n:
            t = max(t, float(self.rows.last("t")))
        return {"t": t, "wall": wall,
                "lb": to_min_sense(model.getDualbound(), sign, self.bound),
                "ub": incumbent(model, sign, self.bound),
                "nsols": model.getNSolsFound(), "nodes": model.getNNodes(), "lp_iters": model.getNLPIterations()}


@contextmanager
def _stderr_to(path: Path) -> Iterator[None]:
    """Send file descriptor 2 to `path`: SCIP prints its reader errors from C, not via Python."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(path, "wb") as sink:
            os.dup2(sink.fileno(), 2)
            try:
                yield
            finally:
                os.dup2(saved, 2)
    finally:
        os.close(saved)


def read_model(mps_path: Path) -> Model:
    """A quiet Model holding the instance; MIPReadError with SCIP's own message if unreadable."""
    path = Path(mps_path)
    model = Model()
    model.hideOutput()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "stderr"
        try:
            with _stderr_to(log):
                model.readProblem(str(path))
        except OSError as exc:
            scip_says = " | ".join(line.strip() for line in log.read_text(errors="replace").splitlines() if line.strip())
            raise MIPReadError(f"SCIP cannot read {path}: {exc} [{scip_says}]") from exc
    return model


def solve(mps_path: Path, *, family: str, bound: float, gap: float = 1e-4, time_limit: float = 30.0,
          node_limit: int | None = None, seed_shift: int = 0, sample_dt: float = 0.02, stopper: Stopper | None = None,
          best_sol_limit: int | None = None) -> tuple[Trajectory, Model]:
    """Solve one instance with the §6 settings and return its sampled trajectory and the model.

    The trajectory ends with one row of the final state. final_ub is the final incumbent in
    minimization sense (B if none was found): for a full solve it is U_final of §3.2, for a
    stopped or limited solve it is only the incumbent returned, so y = ub - final_ub of such a
    trajectory is not a label; nor is a full solve's unless SCIP proved it (`proved`).
    solve_time is the wall time of optimize(), handler overhead included. best_sol_limit sets limits/bestsol (the "solution limit 1/3" baselines of §4).
    """
    if best_sol_limit is not None and not (isinstance(best_sol_limit, (int, np.integer)) and best_sol_limit >= 1):
        raise ValueError(f"best_sol_limit must be None or an integer >= 1, got {best_sol_limit!r}")
    path = Path(mps_path)
    model = configure(read_model(path), gap=gap, time_limit=time_limit, node_limit=node_limit, seed_shift=seed_shift)
    if best_sol_limit is not None:
        model.setParam("limits/bestsol", int(best_sol_limit))
    sampler = Sampler(bound, sample_dt, stopper)
    model.includeEventhdlr(sampler, "trajectory_sampler", "samples bounds for early stopping")
    sampler.begin()
    model.optimize()
    solve_time = perf_counter() - sampler.t0
    try:
        if sampler.error is not None:
            raise sampler.error
        sampler.rows.append(sampler.state(wall=solve_time))
    finally:
        # The model holds the handler (its plugin list) and the handler holds the model: such a
        # pair is freed by the cyclic GC, which may clear the handler before the model's teardown
        # calls it (pyscipopt 6.3 segfaults so at interpreter exit once torch is loaded). Without
        # the back reference, reference counting frees the pair, model first, when it is dropped.
        sampler.model = None
    columns = sampler.rows.arrays()
    trajectory = Trajectory(
        instance=path.stem, family=family, sense=1 if model.getObjectiveSense() == "minimize" else -1,
        bound=float(bound), **columns, final_ub=float(columns["ub"][-1]), solve_time=solve_time,
        status=model.getStatus(), overhead=sampler.overhead,
        info={"stopped_at": sampler.stopped_at, "n_vars": model.getNVars(), "n_cons": model.getNConss()})
    return trajectory, model


def write_solution(model: Model, path: Path) -> None:
    """Write the incumbent in SCIP's .sol format (all variables, zeros included)."""
    if model.getNSols() == 0:
        raise ValueError(f"no solution to write to {path}: the solve found no incumbent")
    model.writeBestSol(str(path), write_zeros=True)

