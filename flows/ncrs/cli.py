"""`papers ncrs minimize MODULE:FUNCTION`: minimise a user's function on R^d by noisy-comparison random search.

The function (one numpy array in, one real number out, as scipy.optimize takes one) is only ever compared:
y = x + alpha s, s ~ N(0, I), kept when judged better (by a majority of --votes comparisons). Every option is
checked before the function is imported, and its first value before any search; a bad one is an InputError
(one line, exit 2 from `papers`).
"""
from __future__ import annotations

import json

import numpy as np
import typer

from tasks.core.console import console
from tasks.core.inputs import InputError, check_count, check_number, check_range

from .paper import PAPER

app = typer.Typer(help=PAPER.command.summary, no_args_is_help=True)
MAX_DIM, MAX_BUDGET = 1_000_000, 10_000_000
# Each comparison draws --dim Gaussian coordinates, moves the candidate by them and sends both points to the user's
# function (in its own process): dim x budget is the run's work, refused past this before the function is imported
# (a bound known at once, unlike a time limit, and no half-finished search). At the limit: about 5 minutes on a busy
# 2-core machine (150 ns a coordinate measured at dim 1,000,000).
MAX_COORDINATES = 2_000_000_000


def check_options(dim: int, budget: int, alpha: float, votes: int, noise: float, seed: int) -> None:
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


@app.command()
def minimize(
    function: str = typer.Argument(..., help="MODULE:FUNCTION, a function of one numpy array returning a real number "
                                             "(MODULE is imported from the working directory first)."),
    dim: int = typer.Option(..., "--dim", help="Length of the vector the function takes."),
    budget: int = typer.Option(..., "--budget", help=f"Comparisons, at most {MAX_BUDGET:,}."),
    alpha: float = typer.Option(0.05, help="Step: candidates y = x + ALPHA * N(0, I)."),
    votes: int = typer.Option(1, help="Comparisons of each pair, decided by majority (odd)."),
    noise: float = typer.Option(0.0, "--noise", help="Flip probability of each comparison, in [0, 0.5) "
                                                     "(a simulated noisy judge)."),
    seed: int = typer.Option(0, help="Seed of the directions and the noise (>= 0)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object (with the final point)."),
) -> None:
    """Minimise FUNCTION from x0 = 0 with comparisons f(x) < f(y) only; print the final point and value."""
    check_options(dim, budget, alpha, votes, noise, seed)
    from tasks.comparison.oracles import ComparisonOracle, Noise
    from tasks.comparison.random_search import ncrs
    from tasks.comparison.user_function import checked_objective
    from tasks.userdata.functions import load_function

    objective = checked_objective(load_function(function), function, (dim,))
    x0 = np.zeros((1, dim))
    f0 = float(objective(x0[0]))  # a wrong dimension or a non-finite value stops here, before any search
    rng = np.random.default_rng(seed)
    oracle = ComparisonOracle(objective, Noise("margin", p=0.5 - noise) if noise else Noise(), rng)
    result = ncrs(oracle, x0, alpha, budget, rng, votes=votes)
    x = result.x[0]
    summary = {"method": "ncrs", "dim": dim, "comparisons": result.queries, "iterations": result.iterations,
               "f_start": f0, "f_final": float(objective(x)), "time_s": result.wall_time_s, "x": x.tolist()}
    if as_json:
        print(json.dumps(summary))
        return
    console().print(f"ncrs (dim {dim}): f {f0:.6g} -> {summary['f_final']:.6g} with {result.queries:,} comparisons "
                    f"in {result.iterations:,} iterations, {result.wall_time_s:.3f} s")
