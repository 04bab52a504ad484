"""`papers ncrs minimize MODULE:FUNCTION`: minimise a user's function on R^d by noisy-comparison random search.

The function (one numpy array in, one real number out, as scipy.optimize takes one) is only ever compared:
y = x + alpha_t s, s ~ N(0, I), kept when judged better (by a majority of --votes comparisons). The search starts
at --x0 (zeros by default), its step follows --schedule, and the command prints the last iterate and the best point
the search stood on (by f, read for the report only). Every option is checked before the function is imported, and
its first value before any search; a bad one is an InputError (one line, exit 2 from `papers`).
"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import typer

from tasks.core.console import console
from tasks.core.inputs import InputError, check_choice, check_count, check_number, check_range

from .paper import PAPER

app = typer.Typer(help=PAPER.command.summary, no_args_is_help=True)
MAX_DIM, MAX_BUDGET = 1_000_000, 10_000_000
# Each comparison draws --dim Gaussian coordinates, moves the candidate by them and sends both points to the user's
# function (in its own process): dim x budget is the run's work, refused past this before the function is imported
# (a bound known at once, unlike a time limit, and no half-finished search). At the limit: about 5 minutes on a busy
# 2-core machine (150 ns a coordinate measured at dim 1,000,000).
MAX_COORDINATES = 2_000_000_000
# constant: the spec's theory step (alpha of order eps / (L k), the same at every iteration); inv-sqrt:
# alpha / sqrt(t + 1) at iteration t, the usual schedule when no target eps is fixed in advance.
SCHEDULES = ("constant", "inv-sqrt")
X0_FILES = (".npy", ".csv", ".txt")
# A plain decimal number: float() alone also takes "1_0", "nan", "inf" and padding.
NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def check_options(dim: int, budget: int, alpha: float, votes: int, noise: float, seed: int, schedule: str) -> None:
    check_range("--dim", dim, low=1, high=MAX_DIM)
    check_range("--budget", budget, low=1, high=MAX_BUDGET, note="comparisons")
    check_count(f"--dim x --budget ({dim:,} x {budget:,}, each comparison draws --dim coordinates; lower either)",
                dim * budget, MAX_COORDINATES, " coordinates")
    check_number("--alpha", alpha, above=0)
    if votes < 1 or votes % 2 == 0:
        raise InputError(f"--votes: must be an odd number >= 1, got {votes}")
    if votes > budget:
        raise InputError(f"--votes: {votes} votes per decision do not fit in --budget {budget}")
    check_number("--noise", noise, at_least=0, below=0.5, note="a flip probability")
    check_range("--seed", seed, low=0)
    check_choice("--schedule", schedule, SCHEDULES)


def _x0_file(path: Path) -> np.ndarray:
    from tasks.userdata.arrays import read_array

    values = read_array(path, "--x0", max_elements=MAX_DIM)
    if values.ndim == 2 and 1 not in values.shape:
        raise InputError(f"--x0 {path}: a {values.shape[0]} x {values.shape[1]} table, expected one vector "
                         "(one row or one column)")
    return values.ravel()


def _x0_list(text: str, dim: int) -> np.ndarray:
    hint = f"(give comma-separated numbers or a {'/'.join(X0_FILES)} file)"
    items = text.split(",")
    if len(items) != dim:  # before parsing: a list of any length costs nothing more than its count
        raise InputError(f"--x0: {len(items):,} values, expected --dim {dim:,} {hint}")
    for position, item in enumerate(items, 1):
        if not NUMBER.fullmatch(item.strip()):
            raise InputError(f"--x0: value {position} must be a finite number, got {item.strip()[:40]!r} {hint}")
    return np.array([float(item) for item in items])


def parse_x0(text: str | None, dim: int) -> np.ndarray:
    """The start point: zeros, comma-separated numbers, or a .npy/.csv/.txt file holding one vector; `dim` finite
    values."""
    if text is None:
        return np.zeros(dim)
    values = _x0_file(Path(text)) if Path(text).suffix.lower() in X0_FILES else _x0_list(text, dim)
    if values.size != dim:
        raise InputError(f"--x0 {text}: {values.size:,} values, expected --dim {dim:,}")
    if not np.isfinite(values).all():  # a decimal past the float range, 1e999, reads as inf
        position = int(np.argmax(~np.isfinite(values)))
        raise InputError(f"--x0: value {position + 1} is not finite ({values[position]}); every value must be")
    return values


class ScheduledDirections:
    """Directions alpha_t N(0, I) for ncrs run with alpha = 1: the schedule rides on the direction sampler, so the
    shared search loop stays as it is. One call per iteration (a decision of --votes comparisons), t from 0."""

    def __init__(self, alpha: float, schedule: str):
        self.alpha, self.schedule, self.t = alpha, schedule, 0

    def step(self, t: int) -> float:
        return self.alpha if self.schedule == "constant" else self.alpha / math.sqrt(t + 1)

    def __call__(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        s = self.step(self.t) * rng.standard_normal(shape)
        self.t += 1
        return s


class RememberingObjective:
    """The user's objective with the last two points it evaluated remembered: the oracle asks f(x) again at every
    comparison while x stays, and the best-so-far reads f at an accepted candidate the oracle has just evaluated, so
    neither calls the user's function twice for one point."""

    def __init__(self, objective):
        self.objective = objective
        self.memory: dict[tuple, np.ndarray] = {}

    def __call__(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        key = (x.shape, x.tobytes())
        value = self.memory.pop(key) if key in self.memory else self.objective(x)
        self.memory[key] = value  # most recent last
        if len(self.memory) > 2:
            self.memory.pop(next(iter(self.memory)))
        return value


class BestSoFar:
    """A recorder keeping the point of least f the search has stood on and the comparisons used when it got there
    (a report only: the search never reads f). Only an accepted candidate can be better."""

    def __init__(self, objective: RememberingObjective, x0: np.ndarray, f0: float):
        self.objective, self.x, self.f, self.at = objective, np.array(x0), f0, 0

    def __call__(self, x: np.ndarray, queries: int, info: dict) -> bool:
        if "accepted" in info and info["accepted"][0]:
            value = float(self.objective(x)[0])
            if value < self.f:
                self.x, self.f, self.at = np.array(x[0]), value, queries
        return False


@app.command()
def minimize(
    function: str = typer.Argument(..., help="MODULE:FUNCTION, a function of one numpy array returning a real number "
                                             "(MODULE is imported from the working directory first)."),
    dim: int = typer.Option(..., "--dim", help="Length of the vector the function takes."),
    budget: int = typer.Option(..., "--budget", help=f"Comparisons, at most {MAX_BUDGET:,}."),
    alpha: float = typer.Option(0.05, help="Step: candidates y = x + alpha_t N(0, I), alpha_0 = ALPHA."),
    schedule: str = typer.Option("constant", help="Step schedule: constant (alpha_t = ALPHA, the theory's step for a "
                                                  "target eps) or inv-sqrt (alpha_t = ALPHA / sqrt(t + 1))."),
    x0: str = typer.Option(None, "--x0", help="Start point: DIM comma-separated numbers, or a .npy/.csv/.txt file "
                                              "holding one vector (default: zeros)."),
    votes: int = typer.Option(1, help="Comparisons of each pair, decided by majority (odd)."),
    noise: float = typer.Option(0.0, "--noise", help="Flip probability of each comparison, in [0, 0.5) "
                                                     "(a simulated noisy judge)."),
    seed: int = typer.Option(0, help="Seed of the directions and the noise (>= 0)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object (with the last and the best point)."),
) -> None:
    """Minimise FUNCTION from --x0 with comparisons f(x) < f(y) only; print the last and the best point's values."""
    check_options(dim, budget, alpha, votes, noise, seed, schedule)
    start = parse_x0(x0, dim)
    from tasks.comparison.oracles import ComparisonOracle, Noise
    from tasks.comparison.random_search import ncrs
    from tasks.comparison.user_function import checked_objective
    from tasks.userdata.functions import load_function

    objective = RememberingObjective(checked_objective(load_function(function), function, (dim,)))
    f0 = float(objective(start))  # a wrong dimension or a non-finite value stops here, before any search
    rng = np.random.default_rng(seed)
    oracle = ComparisonOracle(objective, Noise("margin", p=0.5 - noise) if noise else Noise(), rng)
    directions = ScheduledDirections(alpha, schedule)
    best = BestSoFar(objective, start, f0)
    result = ncrs(oracle, start[None], 1.0, budget, rng, votes=votes, record=best, sample=directions)
    x = result.x[0]
    summary = {"method": "ncrs", "dim": dim, "schedule": schedule, "comparisons": result.queries,
               "iterations": result.iterations, "f_start": f0, "f_final": float(objective(x)), "f_best": best.f,
               "best_at_comparison": best.at, "final_step": directions.step(max(result.iterations - 1, 0)),
               "time_s": result.wall_time_s, "x": x.tolist(), "x_best": best.x.tolist()}
    if as_json:
        print(json.dumps(summary))
        return
    console().print(f"ncrs (dim {dim}): f {f0:.6g} -> {summary['f_final']:.6g} (last iterate), best {best.f:.6g} at "
                    f"comparison {best.at:,}; {result.queries:,} comparisons in {result.iterations:,} iterations, "
                    f"{result.wall_time_s:.3f} s")
