"""`papers riemannian-dueling minimize MODULE:FUNCTION`: minimise a user's function on a manifold from comparisons alone.

The function (one numpy array in, one real number out, as scipy.optimize takes one) is only ever compared by the
method: RDNGD on the sphere, SPD and Stiefel St(n, p) manifolds (`--directions` comparisons averaged per step), RDFW
(projection-free) on the probability simplex. Besides the last iterate the CLI prints the best-so-far iterate, chosen
by the true f: the CLI has f, so it evaluates each iterate once for this report (never fed back to the method, and
exact even under `--noise`); these evaluations are not comparisons and are not counted in `--budget`. Every option is
checked before the function is imported, and the function's first value before any search; a bad one is an
InputError (one line, exit 2 from `papers`).
"""
from __future__ import annotations

import json
import math

import numpy as np
import typer

from tasks.core.console import console
from tasks.core.inputs import InputError, check_choice, check_number, check_range

from .paper import PAPER

# tasks.comparison.geometry.MANIFOLDS, which imports pymanopt (and torch): spelled here so --help starts at once;
# tests/papers/riemannian_dueling/test_cli.py keeps the two equal.
MANIFOLDS = ("sphere", "spd", "stiefel", "simplex")

app = typer.Typer(help=PAPER.command.summary, no_args_is_help=True)
MAX_DIM = {"sphere": 100_000, "spd": 200, "stiefel": 10_000, "simplex": 100_000}
MAX_BUDGET = 10_000_000
MAX_STIEFEL_ENTRIES = 1_000_000  # n * p: one St(n, p) point and its probes stay a few megabytes
MAX_DIRECTIONS = 10_000


def check_options(manifold: str, dim: int, budget: int, noise: float, step: float, probe: float, seed: int,
                  stiefel_p: int | None = None, directions: int | None = None) -> None:
    check_choice("--manifold", manifold, MANIFOLDS)
    check_range("--dim", dim, low=2, high=MAX_DIM[manifold], note=f"for {manifold}")
    check_range("--budget", budget, low=1, high=MAX_BUDGET, note="comparisons")
    if stiefel_p is not None:
        if manifold != "stiefel":
            raise InputError(f"--stiefel-p: only for --manifold stiefel, got --manifold {manifold}")
        check_range("--stiefel-p", stiefel_p, low=1, high=min(dim, MAX_STIEFEL_ENTRIES // dim),
                    note=f"columns: p <= n = {dim} and n * p <= {MAX_STIEFEL_ENTRIES:,}")
    if directions is not None:
        if manifold == "simplex":
            raise InputError("--directions: RDFW on the simplex sets its own growing comparison batches, "
                             f"got --directions {directions}")
        check_range("--directions", directions, low=1, high=min(budget, MAX_DIRECTIONS),
                    note=f"comparisons per step, at most --budget {budget:,} and {MAX_DIRECTIONS:,}")
    check_number("--noise", noise, at_least=0, below=0.5, note="a flip probability")
    check_number("--step", step, above=0)
    check_number("--probe", probe, above=0)
    check_range("--seed", seed, low=0)


def start_point(geometry, rng: np.random.Generator) -> np.ndarray:
    """A seeded start: uniform on the sphere, the identity on SPD, a random frame on Stiefel, the simplex's centre."""
    if geometry.name == "sphere":
        x = rng.standard_normal(geometry.shape)
        return x / np.linalg.norm(x)
    if geometry.name == "spd":
        return np.eye(geometry.shape[0])
    if geometry.name == "stiefel":
        return np.linalg.qr(rng.standard_normal(geometry.shape))[0]
    return np.full(geometry.shape, 1 / geometry.shape[0])


class BestSoFar:
    """A recorder that keeps the iterate of least true f (the first such on ties): a report the method never sees."""

    def __init__(self, objective) -> None:
        self.objective, self.x, self.f = objective, None, math.inf

    def __call__(self, x: np.ndarray, queries: int, info: dict) -> bool:
        value = float(self.objective(x))
        if value < self.f:
            self.x, self.f = np.array(x), value
        return False


def rdfw_horizon(dim: int, budget: int) -> int:
    """The most RDFW iterations whose growing comparison batches fit in `budget` (L = 1, D = sqrt 2)."""
    from tasks.comparison.dueling import rdfw_schedule

    used, horizon = 0, 0
    while True:
        m, _ = rdfw_schedule(horizon, dim - 1, 1.0, math.sqrt(2))
        if used + m > budget:
            return horizon
        used, horizon = used + m, horizon + 1


@app.command()
def minimize(
    function: str = typer.Argument(..., help="MODULE:FUNCTION, a function of one numpy array returning a real number "
                                             "(MODULE is imported from the working directory first)."),
    manifold: str = typer.Option("sphere", help=f"One of {', '.join(MANIFOLDS)} (simplex: RDFW, projection-free)."),
    dim: int = typer.Option(..., "--dim", help="Points are vectors of DIM (sphere, simplex), DIM x DIM matrices (spd) "
                                               "or DIM x P frames (stiefel, P = --stiefel-p)."),
    budget: int = typer.Option(..., "--budget", help=f"Comparisons (each evaluates the function twice), at most "
                                                     f"{MAX_BUDGET:,}."),
    noise: float = typer.Option(0.0, "--noise", help="Flip probability of each comparison, in [0, 0.5) "
                                                     "(a simulated noisy judge)."),
    step: float = typer.Option(0.3, help="RDNGD step eta_t = STEP / sqrt(t + 1)."),
    probe: float = typer.Option(1e-4, help="RDNGD probe radius nu."),
    seed: int = typer.Option(0, help="Seed of the start, the directions and the noise (>= 0)."),
    stiefel_p: int | None = typer.Option(None, "--stiefel-p", help="Columns P of the Stiefel frames, 1 <= P <= DIM "
                                                                   "(stiefel only; default 2)."),
    directions: int | None = typer.Option(None, "--directions", help="Random directions (comparisons) averaged per "
                                                                     "RDNGD step, 1 <= m <= BUDGET (default 1; not "
                                                                     "for simplex)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object (with the last and best points)."),
) -> None:
    """Minimise FUNCTION on the manifold from comparisons f(x) < f(y) only; print the last and best-so-far values."""
    check_options(manifold, dim, budget, noise, step, probe, seed, stiefel_p, directions)
    from tasks.comparison.dueling import SqrtDecay, rdfw, rdngd
    from tasks.comparison.geometry import make_geometry
    from tasks.comparison.oracles import ComparisonOracle, Noise
    from tasks.comparison.user_function import checked_objective
    from tasks.userdata.functions import load_function

    geometry = make_geometry(manifold, dim, stiefel_p or 2)
    if manifold == "simplex" and rdfw_horizon(dim, budget) == 0:
        raise InputError(f"--budget: {budget:,} comparisons is less than one RDFW iteration in dimension {dim} "
                         f"({_first_batch(dim):,} comparisons)")
    objective = checked_objective(load_function(function), function, geometry.shape)
    rng = np.random.default_rng(seed)
    x0 = start_point(geometry, rng)
    f0 = float(objective(x0))  # a wrong dimension or a non-finite value stops here, before any search
    oracle = ComparisonOracle(objective, Noise("margin", p=0.5 - noise) if noise else Noise(), rng)
    best = BestSoFar(objective)
    if manifold == "simplex":
        result = rdfw(geometry, oracle, x0, rdfw_horizon(dim, budget), rng, record=best)
        method = "rdfw"
    else:
        result = rdngd(geometry, oracle, x0, budget, SqrtDecay(step), probe, rng, directions or 1, record=best)
        method = "rdngd"
    summary = {"method": method, "manifold": manifold, "dim": dim, "comparisons": result.queries,
               "iterations": result.iterations, "f_start": f0, "f_final": float(objective(result.x)),
               "f_best": best.f, "best_by": "true f at every iterate (reporting only)",
               "time_s": result.wall_time_s, "x": np.asarray(result.x).tolist(), "x_best": best.x.tolist()}
    if manifold == "stiefel":
        summary["stiefel_p"] = geometry.shape[1]
    if manifold != "simplex":
        summary["directions"] = directions or 1
    if as_json:
        print(json.dumps(summary))
        return
    console().print(f"{method} on {manifold} (dim {dim}): f {f0:.6g} -> {summary['f_final']:.6g} (last), "
                    f"{best.f:.6g} (best so far) with {result.queries:,} comparisons in {result.iterations:,} "
                    f"iterations, {result.wall_time_s:.3f} s")


def _first_batch(dim: int) -> int:
    from tasks.comparison.dueling import rdfw_schedule

    return rdfw_schedule(0, dim - 1, 1.0, math.sqrt(2))[0]
