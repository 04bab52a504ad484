"""`papers zovh estimate`: the Hessian of a user's black-box function at a point from function values only.

MODULE:FUNCTION names a Python function of one 1-D numpy array returning a real number (MODULE is imported with the
working directory on the path). Every option and the point are checked before the function is imported or queried;
a non-finite or non-scalar function value stops with the query that produced it. The estimate is written as a dense
d x d .npy (--out).
"""
from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import typer

from tasks.core.console import console
from tasks.core.inputs import InputError, check_choice, check_count, check_number, check_output, check_range
from tasks.core.io import staged_output
from tasks.userdata.arrays import read_array
from tasks.userdata.functions import load_function

from .paper import PAPER

app = typer.Typer(help=PAPER.command.summary, no_args_is_help=True)
METHODS = ("zovh", "s1", "s2", "scd", "cd")
MAX_DIMENSION = 5000  # the dense d x d estimate: 200 MB of float64
MAX_QUERIES = 100_000
# Every estimator divides the function differences by (normaliser x mu^2). Below sqrt of float64's smallest normal
# number (2.2e-308), mu^2 is subnormal or 0: the estimate is inf or NaN (or rounding noise), never a Hessian.
MIN_MU = math.sqrt(sys.float_info.min)  # 1.49e-154


def check_options(method: str, queries: int, mu: float, seed: int) -> None:
    check_choice("--method", method, METHODS)
    check_range("--queries", queries, low=3, high=MAX_QUERIES)
    check_number("--mu", mu, at_least=MIN_MU, note="below it mu^2 underflows float64 and 1/mu^2 is not finite")
    check_range("--seed", seed, low=0)


def batched(function, reference: str):
    """The user's f(x) as the estimators' batched objective (m, d) -> (m,), every value checked."""
    import torch

    def objective(X: torch.Tensor) -> torch.Tensor:
        values = []
        for row in X.numpy():
            try:
                value = function(row.copy())
            except InputError:  # its process crashed: said as it is
                raise
            except Exception as error:  # noqa: BLE001 - the user's function failed: name it, no traceback
                raise InputError(f"FUNCTION {reference}: raised {type(error).__name__}: {error}") from None
            try:
                value = float(np.asarray(value).item())
            except (TypeError, ValueError):
                raise InputError(f"FUNCTION {reference}: returned {type(value).__name__} {str(value)[:40]!r}, "
                                 "expected one real number") from None
            if not math.isfinite(value):
                raise InputError(f"FUNCTION {reference}: returned the non-finite value {value}")
            values.append(value)
        return torch.tensor(values, dtype=torch.float64)

    return objective


@app.command()
def estimate(
    function: str = typer.Argument(..., help="MODULE:FUNCTION, a function of a 1-D numpy array returning a float."),
    at: Path = typer.Option(..., "--at", help=f"The point: a 1-D .npy or .csv of at most {MAX_DIMENSION:,} numbers."),
    queries: int = typer.Option(..., "--queries", help=f"Query budget K (3..{MAX_QUERIES:,}): zovh and s1 use K "
                                "values, s2 K + 1, scd and cd 2 ((K-1)//2) + 1."),
    method: str = typer.Option("zovh", help=f"One of {', '.join(METHODS)} (zovh: the mean-baseline estimator)."),
    mu: float = typer.Option(0.1, help=f"Smoothing radius (>= {MIN_MU:.3g}: below it mu^2 underflows)."),
    seed: int = typer.Option(0, help="Seed of the random directions (>= 0)."),
    out: Path = typer.Option(None, "--out", help="Write the d x d estimate as .npy."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Estimate the Hessian of FUNCTION at the point --at from --queries function values."""
    check_options(method, queries, mu, seed)
    if out is not None:
        check_output(out, "--out", inputs={"--at": at})
    x = read_array(at, "--at", ndim=(1,), max_elements=MAX_DIMENSION)
    check_count("--at dimension", x.size, MAX_DIMENSION)
    user_function = load_function(function)
    import torch

    from tasks.zeroth.hessian import estimator

    started = time.perf_counter()
    result = estimator(method)(batched(user_function, function), torch.from_numpy(x), queries,
                               torch.Generator().manual_seed(seed), mu)
    H = result.dense().numpy()
    elapsed = time.perf_counter() - started
    if not np.isfinite(H).all():  # the differences over mu^2 overflow float64 (a small mu, or large values)
        raise InputError(f"--mu {mu:g}: the estimate has non-finite entries (the function's differences over mu^2 "
                         "overflow float64); choose a larger --mu or rescale the function")
    if out is not None:
        with staged_output(out, "--out") as temporary, open(temporary, "wb") as handle:
            np.save(handle, H)  # a file, not a name: np.save would add .npy to a name without it
    summary = {"method": method, "d": int(x.size), "queries_used": result.queries, "mu": mu, "seed": seed,
               "frobenius_norm": float(np.linalg.norm(H)), "trace": float(np.trace(H)), "time_s": elapsed,
               "out": str(out) if out else None}
    if as_json:
        print(json.dumps(summary))
        return
    console().print(f"{method}: {x.size}-dimensional Hessian estimate from {result.queries} queries, "
                    f"||H||_F {summary['frobenius_norm']:.4g}, trace {summary['trace']:.4g}, {elapsed:.3f} s"
                    + (f" -> {out}" if out else ""))
