"""Read and solve a user's MIP in a child process, so a crash or hang of SCIP cannot take the caller down.

SCIP's readers run C code on whatever file a user hands us: a truncated MPS segfaults inside
pyscipopt, a NaN objective coefficient makes the solve ignore its time limit. So `read` and
`solve` each start a child, `python -m tasks.mip.isolated`, and return plain results
(`Instance`, `Solve`); a child killed by a signal or one that runs past its phase's limit (plus
a grace period) is killed and reported as an `InputError` naming the file. The stage code
(tasks/mip/solver.py) runs in-process as before: it only ever sees generated instances.

Why a `python -m` subprocess and not multiprocessing: a "spawn"/"forkserver" child re-imports
the parent's `__main__`, which for `papers` is the whole CLI (every paper's flows, Prefect,
MLflow: seconds, and side effects); a plain subprocess imports pyscipopt (and torch only when a
stopper runs), gets its own process group so one killpg ends it and anything it started, and
reports a signal as a negative exit status. The child reports on a pipe of its own (JSON lines),
not on stdout, where SCIP's C code may write: first the phase it enters ("read", "solve"), so the
parent applies the right limit to each, then the result or a user-facing error message.
"""
from __future__ import annotations

import gzip
import json
import math
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from tasks.core.inputs import InputError, check_count, check_readable

# Problem formats this build of SCIP (pyscipopt 6.3, SCIP 10) reads, each checked by a round trip
# or a reader's own parse error; all but .nl also gzipped (.mps.gz). Not here: .zpl (no ZIMPL in
# this build), .gms (SCIP writes GAMS, it does not read it), .sol/.mst/.bnd/.fix (solutions and
# bounds, not problems), .smps/.sto/.tim/.cor (stochastic programs; the .smps reader segfaults).
FORMATS = (".mps", ".lp", ".rlp", ".cip", ".opb", ".wbo", ".pip", ".fzn", ".osil", ".cnf", ".nl")
GZIP_FORMATS = tuple(f for f in FORMATS if f != ".nl")

# SCIP's tolerances are absolute (feasibility 1e-6) and doubles hold 16 digits, so a coefficient,
# bound, side or objective term above 1e15 in magnitude leaves no digit for them; NaN makes the
# solve ignore its time limit. SCIP reads |value| >= 1e20 as infinity (no bound), which is fine.
MAX_ABS = 1e15
MAX_VARS = 1_000_000  # the stopper's families have 10^2..10^4; a million is far past anything it fits
MAX_CONS = 1_000_000
READ_LIMIT_S = 120.0  # starting the child and reading the instance
GRACE_S = 10.0  # past SCIP's own time limit before the child is killed
# SCIP's time limit is CPU time (solver.configure); on a loaded machine a CPU second takes longer on
# the wall clock, so the child's wall limit allows this many wall seconds per CPU second of it.
WALL_PER_CPU_S = 4.0

STATUSES_WITHOUT_OBJECTIVE = ("infeasible", "unbounded", "inforunbd")


@dataclass(frozen=True)
class Instance:
    """What reading found. Answers getObjectiveSense / getNVars / getNConss like a pyscipopt Model,
    so `tasks.mip.stopper.signature_mismatch` takes it as it is."""

    path: str
    sense: str  # "minimize" | "maximize"
    n_vars: int
    n_cons: int
    read_s: float

    def getObjectiveSense(self) -> str:  # noqa: N802 - pyscipopt's name
        return self.sense

    def getNVars(self) -> int:  # noqa: N802
        return self.n_vars

    def getNConss(self) -> int:  # noqa: N802
        return self.n_cons


@dataclass(frozen=True)
class Solve:
    """One solve, as SCIP reports it in the model's own sense (never clipped to the stopper's B).

    objective is None without an incumbent or when the status is infeasible/unbounded/inforunbd;
    dual_bound is None when SCIP has none (+-infinity). stopped_at_s is the wall time of the
    stopper's stop, None when it did not stop before SCIP would have finished by itself (its own
    gap within tolerance); predicted_gap is its last prediction.
    overhead_s: seconds inside the sampling event handler (stopper included); inference_s:
    seconds of it spent in the stopper's features and network.
    """

    status: str
    objective: float | None
    dual_bound: float | None
    n_sols: int
    solve_time: float
    stopped_at_s: float | None = None
    predicted_gap: float | None = None
    tau: float | None = None
    solution_written: bool = False
    overhead_s: float = 0.0
    inference_s: float = 0.0


# ---------------------------------------------------------------------------------------------
# Checks in the caller's process (no SCIP involved)


def format_of(path: Path) -> str:
    """The format suffix SCIP would pick for `path` ('.mps' for x.mps and x.mps.gz)."""
    suffixes = [s.lower() for s in Path(path).suffixes]
    if len(suffixes) >= 2 and suffixes[-1] == ".gz":
        return suffixes[-2] + ".gz"
    return suffixes[-1] if suffixes else ""


def check_instance(path: Path) -> Path:
    """A user's instance file: exists, is a regular readable file of sane size, a format SCIP reads,
    text (or gzip for .gz). Returns `path`; messages name it as the user gave it."""
    path = check_readable(Path(path), "instance")
    kind = format_of(path)
    readable = FORMATS + tuple(f + ".gz" for f in GZIP_FORMATS)
    if kind not in readable:
        raise InputError(f"instance {path}: SCIP does not read {kind or 'files without an extension'}; "
                         f"rename it to one of {', '.join(FORMATS)} (also gzipped, e.g. .mps.gz)")
    with open(path, "rb") as handle:
        head = handle.read(65536)
    if kind.endswith(".gz"):
        if head[:2] != b"\x1f\x8b":
            raise InputError(f"instance {path}: not a gzip file, as its .gz extension says")
        try:
            with gzip.open(path, "rb") as handle:
                head = handle.read(65536)
        except (OSError, EOFError) as error:
            raise InputError(f"instance {path}: a broken gzip file ({error})") from None
    if b"\0" in head:
        raise InputError(f"instance {path}: a binary file, expected a {kind.removesuffix('.gz')} text model")
    return path


# ---------------------------------------------------------------------------------------------
# The caller's side: start a child, apply each phase's limit, turn its fate into a result or an error


def read(path: Path, *, max_vars: int = MAX_VARS, max_cons: int = MAX_CONS, max_abs: float = MAX_ABS,
         limit_s: float = READ_LIMIT_S) -> Instance:
    """Read `path` in a child, refusing it above the size limits or with a non-finite or absurd
    (> max_abs) coefficient, bound, side or objective term. InputError names the file and why."""
    job = {"job": "read", "path": str(Path(path).resolve()), "name": str(path), "max_vars": max_vars, "max_cons": max_cons,
           "max_abs": max_abs}
    return Instance(**_run(job, {"read": limit_s}, Path(path)))


def solve(path: Path, *, family: str, bound: float, gap: float, time_limit: float, sample_dt: float,
          node_limit: int | None = None, stopper: Path | None = None, alpha: float | None = None, solution: Path | None = None,
          read_s: float = 0.0, grace_s: float = GRACE_S, limit_s: float = READ_LIMIT_S) -> Solve:
    """Solve `path` in a child with the stage's settings (solver.solve), optionally stopped by the
    stopper bundle at `stopper`, and write the incumbent to `solution` if one exists.

    The learned stopper only stops at eligible rows, so only while the incumbent and the dual
    bound lie inside its feature range (-B, B) (tasks/mip/features.py).
    The solve phase may run WALL_PER_CPU_S x time_limit (CPU seconds) + 2 read_s (solver.solve reads
    the file again) + grace_s of wall time.
    """
    job = {"job": "solve", "path": str(Path(path).resolve()), "name": str(path), "family": family, "bound": bound, "gap": gap,
           "time_limit": time_limit, "node_limit": node_limit, "sample_dt": sample_dt, "stopper": str(stopper) if stopper else None,
           "alpha": alpha, "solution": str(Path(solution).resolve()) if solution else None}
    limits = {"read": limit_s, "solve": WALL_PER_CPU_S * time_limit + 2 * read_s + grace_s}
    return Solve(**_run(job, limits, Path(path)))


def _run(job: dict, limits: dict[str, float], path: Path) -> dict:
    """Run one job in a child; its result dict, or InputError for a user-facing failure."""
    receive, send = os.pipe()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[2]),
                                                                      os.environ.get("PYTHONPATH")]))}
    with tempfile.TemporaryFile() as stderr:
        try:
            child = subprocess.Popen([sys.executable, "-m", "tasks.mip.isolated", str(send), json.dumps(job)],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr,
                                     pass_fds=(send,), start_new_session=True, env=env)
        finally:
            os.close(send)
        try:
            messages, timed_out = _listen(receive, limits)
            if not timed_out:
                child.wait(timeout=GRACE_S)  # it closed the pipe: it is exiting
        except subprocess.TimeoutExpired:
            pass  # alive after its last word: killed below; a result it sent still counts
        finally:
            os.close(receive)
            if child.poll() is None:
                _kill(child)  # timed out, stuck on exit, or the caller was interrupted
        stderr.seek(0)
        tail = [line for line in stderr.read().decode(errors="replace").splitlines() if line.strip()][-3:]
    phase = next((m["phase"] for m in reversed(messages) if "phase" in m), "read")
    result = next((m for m in messages if "result" in m or "error" in m), None)
    if timed_out:
        if phase == "solve":
            raise InputError(f"instance {path}: SCIP did not stop within its time limit of {job['time_limit']:g} CPU s "
                             f"(killed after {limits['solve']:.0f} s; a numerically troubled model?)")
        raise InputError(f"instance {path}: SCIP did not finish reading it within {limits['read']:.0f} s (killed)")
    if result is not None and "error" in result:
        raise InputError(result["error"])
    if result is not None:
        return result["result"]
    if child.returncode < 0:
        name = signal.Signals(-child.returncode).name
        doing = "it crashed while parsing" if phase == "read" else "it crashed while solving"
        raise InputError(f"SCIP could not {'read' if phase == 'read' else 'solve'} {path} ({doing}: signal {name})")
    raise RuntimeError(f"the SCIP child process for {path} failed (exit {child.returncode}): {' | '.join(tail)}")


def _listen(receive: int, limits: dict[str, float]) -> tuple[list[dict], bool]:
    """The child's messages until it closes the pipe, and whether a phase ran past its limit."""
    messages, buffer = [], b""
    deadline = time.monotonic() + limits["read"]
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return messages, True
        ready, _, _ = select.select([receive], [], [], remaining)
        if not ready:
            continue
        chunk = os.read(receive, 65536)
        if not chunk:
            return messages, False
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            message = json.loads(line)
            messages.append(message)
            if "phase" in message:
                deadline = time.monotonic() + limits[message["phase"]]


def _kill(child: subprocess.Popen) -> None:
    try:
        os.killpg(child.pid, signal.SIGKILL)  # its own session: the group is the child and what it started
    except ProcessLookupError:
        pass
    child.wait()


# ---------------------------------------------------------------------------------------------
# The child's side


def _instance_checks(model, name: str, max_vars: int, max_cons: int, max_abs: float) -> None:
    """Refuse an empty, oversized or numerically absurd model before anything solves it."""
    what = f"instance {name}"
    if model.getNVars() == 0:
        raise InputError(f"{what}: SCIP read no variables from it; not a MIP in the {format_of(Path(name))} format")
    check_count(f"{what}: number of variables", model.getNVars(), max_vars)
    check_count(f"{what}: number of constraints", model.getNConss(), max_cons)
    infinity = model.infinity()
    limit = f"(|value| must be <= {max_abs:g}, or >= {infinity:g} for no bound)"

    def check(value: float, where: str, may_be_infinite: bool) -> None:
        if math.isnan(value):
            raise InputError(f"{what}: {where} is NaN; fix the file (SCIP would ignore its time limit)")
        size = abs(value)
        if size > max_abs and not (may_be_infinite and size >= infinity):
            raise InputError(f"{what}: {where} is {value:g}, absurdly large for SCIP's tolerances {limit}")

    check(model.getObjoffset(), "the objective offset", False)
    for var in model.getVars():
        check(var.getObj(), f"the objective coefficient of {var.name}", False)
        check(var.getLbOriginal(), f"the lower bound of {var.name}", True)
        check(var.getUbOriginal(), f"the upper bound of {var.name}", True)
    for cons in model.getConss():
        values = model.getConsVals(cons)  # None for constraint types without coefficients (and, or, ...)
        for value in values or ():
            check(value, f"a coefficient of constraint {cons.name}", False)
        if cons.isLinear():
            check(model.getLhs(cons), f"the left-hand side of constraint {cons.name}", True)
            check(model.getRhs(cons), f"the right-hand side of constraint {cons.name}", True)


def _finite(value: float, infinity: float) -> float | None:
    return None if not math.isfinite(value) or abs(value) >= infinity else float(value)


def _child_read(job: dict, report) -> dict:
    from tasks.mip import solver

    start = time.perf_counter()
    model = solver.read_model(Path(job["path"]))
    _instance_checks(model, job["name"], job["max_vars"], job["max_cons"], job["max_abs"])
    return asdict(Instance(path=job["path"], sense=model.getObjectiveSense(), n_vars=model.getNVars(),
                           n_cons=model.getNConss(), read_s=time.perf_counter() - start))


def _child_solve(job: dict, report) -> dict:
    from tasks.mip import solver
    from tasks.mip.conformal import scip_gap

    stopper = None
    if job["stopper"]:
        import torch

        from tasks.mip.stopper import NetworkStopper

        torch.set_num_threads(1)
        stopper = NetworkStopper.load(Path(job["stopper"]), alpha=job["alpha"])
    report({"phase": "solve"})
    trajectory, model = solver.solve(Path(job["path"]), family=job["family"], bound=job["bound"], gap=job["gap"],
                                     time_limit=job["time_limit"], node_limit=job["node_limit"], sample_dt=job["sample_dt"],
                                     stopper=stopper)
    status, n_sols, infinity = model.getStatus(), model.getNSols(), model.infinity()
    has_objective = n_sols > 0 and status not in STATUSES_WITHOUT_OBJECTIVE
    written = False
    if job["solution"] and n_sols > 0 and status not in STATUSES_WITHOUT_OBJECTIVE:
        solver.write_solution(model, Path(job["solution"]))
        written = True
    stopped_at = trajectory.info["stopped_at"]
    if stopped_at is not None and scip_gap(float(trajectory.ub[stopped_at]), float(trajectory.lb[stopped_at])) <= job["gap"]:
        stopped_at = None  # SCIP had reached its own tolerance there: not an early stop
    return asdict(Solve(
        status=status, objective=_finite(model.getObjVal(), infinity) if has_objective else None,
        dual_bound=None if status in STATUSES_WITHOUT_OBJECTIVE else _finite(model.getDualbound(), infinity),
        n_sols=n_sols, solve_time=trajectory.solve_time,
        stopped_at_s=float(trajectory.wall[stopped_at]) if stopped_at is not None else None,
        predicted_gap=stopper.predictions[-1] if stopper and stopper.predictions else None,
        tau=_finite(stopper.tau, math.inf) if stopper else None, solution_written=written,
        overhead_s=trajectory.overhead, inference_s=stopper.inference_s if stopper else 0.0))


def _read_error(name: str, error: Exception) -> str:
    """One line from solver.MIPReadError: the reader's own complaints, without SCIP's call-stack noise."""
    said = [s.strip() for s in re.findall(r"ERROR: ([^|\]]+)", str(error))]
    said = [s for s in said if not re.fullmatch(r"Error <-?\d+> in function call", s)]
    return f"instance {name}: SCIP cannot read it as {format_of(Path(name))}: {'; '.join(said) or error.__cause__ or error}"


def _child(channel: int, job: dict) -> None:
    from tasks.mip.solver import MIPReadError

    with os.fdopen(channel, "w", buffering=1) as pipe:
        def report(message: dict) -> None:
            pipe.write(json.dumps(message) + "\n")

        report({"phase": "read"})
        try:
            result = {"read": _child_read, "solve": _child_solve}[job["job"]](job, report)
        except MIPReadError as error:
            report({"error": _read_error(job["name"], error)})
            return
        except InputError as error:
            report({"error": " ".join(str(error).split())})
            return
        report({"result": result})


if __name__ == "__main__":
    _child(int(sys.argv[1]), json.loads(sys.argv[2]))
