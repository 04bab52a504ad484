"""`papers prox-last-iterate solve PROBLEM.json`: a stochastic proximal method on a user's composite problem, returning the last
iterate (the paper's output) beside the uniform average, optionally with the cvxpy / scikit-learn optimum.

PROBLEM.json (paths relative to the file):
  {"problem": "lasso", "X": "X.npy|csv" (n, d), "y": "y.npy|csv" (n,), "lam": 0.1, "iterations": 10000}
  {"problem": "network_lasso", "X": "X.npy" (N, r, p), "y": "y.npy|csv" (N, r), "edges": "edges.csv" (m, 2: node ids
   0..N-1), "lam": 1.0, "iterations": 10000}
optional: "c" (step constant, 0.3), "seed" (0), "reference" (false: also solve to high precision for F*).
Lasso: F = 1/(2n) ||Xx - y||^2 + lam ||x||_1 by Prox-SGD; network Lasso: F = sum_i 1/2 ||X_i x_i - y_i||^2 +
lam sum_edges ||x_i - x_j||_2 by RIP (one random edge prox per step), step c sqrt(1000) / (L-hat sqrt(iterations)).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import typer

from tasks.core.console import console
from tasks.core.inputs import InputError, check_count, check_output, read_json
from tasks.core.io import staged_output
from tasks.userdata.arrays import read_array

from .paper import PAPER

app = typer.Typer(help=PAPER.command.summary,
                  no_args_is_help=True)
PROBLEMS = ("lasso", "network_lasso")
REQUIRED = {"lasso": ("problem", "X", "y", "lam", "iterations"),
            "network_lasso": ("problem", "X", "y", "edges", "lam", "iterations")}
OPTIONAL = {"c": 0.3, "seed": 0, "reference": False}
MAX_ITERATIONS = 10_000_000
MAX_WORK = 2e10  # iterations x values touched per step
MAX_REFERENCE_VALUES = 2_000_000  # cvxpy's problem size


def _number(spec: dict, key: str, path: Path, integer: bool = False, low: float = 0.0) -> float:
    value = spec[key]
    kinds = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds) or not math.isfinite(value) or value <= low:
        kind = "an integer" if integer else "a finite number"
        raise InputError(f"{path}: field {key!r} must be {kind} > {low:g}, got {value!r}")
    return value


def read_problem(path: Path) -> dict:
    """The JSON file's fields checked: known keys, required ones present, types and ranges."""
    spec = read_json(path, "PROBLEM")
    if not isinstance(spec, dict):
        raise InputError(f"PROBLEM {path}: must hold a JSON object")
    kind = spec.get("problem")
    if kind not in PROBLEMS:
        raise InputError(f"{path}: field 'problem' must be one of {', '.join(PROBLEMS)}, got {kind!r}")
    unknown = sorted(set(spec) - set(REQUIRED[kind]) - set(OPTIONAL))
    if unknown:
        raise InputError(f"{path}: unknown field(s) {unknown} for problem {kind!r}")
    missing = [key for key in REQUIRED[kind] if key not in spec]
    if missing:
        raise InputError(f"{path}: missing field(s) {missing} for problem {kind!r}")
    spec = OPTIONAL | spec
    _number(spec, "lam", path)
    _number(spec, "c", path)
    check_count(f"{path}: field 'iterations'", int(_number(spec, "iterations", path, integer=True)), MAX_ITERATIONS)
    if isinstance(spec["seed"], bool) or not isinstance(spec["seed"], int) or spec["seed"] < 0:
        raise InputError(f"{path}: field 'seed' must be an integer >= 0, got {spec['seed']!r}")
    if not isinstance(spec["reference"], bool):
        raise InputError(f"{path}: field 'reference' must be true or false, got {spec['reference']!r}")
    for key in ("X", "y", "edges"):
        if key in spec and not isinstance(spec[key], str):
            raise InputError(f"{path}: field {key!r} must be a file path string, got {spec[key]!r}")
    return spec


def problem_files(spec: dict, problem_file: Path) -> dict[str, Path]:
    """PROBLEM and the data files it names (relative to its folder, as load_data reads them), by name."""
    data = {key: problem_file.parent / spec[key] for key in ("X", "y", "edges") if key in spec}
    return {"PROBLEM": problem_file} | data


def load_data(spec: dict, folder: Path) -> dict:
    """The arrays, with their shapes checked against each other."""
    file = lambda key: folder / spec[key]  # noqa: E731
    if spec["problem"] == "lasso":
        X, y = read_array(file("X"), "X", (2,)), read_array(file("y"), "y", (1,))
        if len(y) != X.shape[0]:
            raise InputError(f"y {file('y')}: {len(y)} values for the {X.shape[0]} rows of X")
        return {"X": X, "y": y}
    X, y = read_array(file("X"), "X", (3,)), read_array(file("y"), "y", (1, 2))
    y = y.reshape(len(y), -1) if y.ndim == 2 else y[:, None]
    if y.shape != X.shape[:2]:
        raise InputError(f"y {file('y')}: shape {y.shape}, expected (nodes, rows) = {X.shape[:2]} from X")
    edges = read_array(file("edges"), "edges", (1, 2))
    if edges.size % 2 or (edges.ndim == 2 and edges.shape[1] != 2):
        raise InputError(f"edges {file('edges')}: shape {edges.shape}, expected pairs of node ids (m, 2)")
    edges = edges.reshape(-1, 2)
    if (edges != np.round(edges)).any() or edges.min() < 0 or edges.max() >= X.shape[0]:
        raise InputError(f"edges {file('edges')}: node ids must be integers in 0..{X.shape[0] - 1}")
    edges = edges.astype(np.int64)
    if (edges[:, 0] == edges[:, 1]).any():
        raise InputError(f"edges {file('edges')}: an edge joins node {int(edges[edges[:, 0] == edges[:, 1]][0, 0])} to itself")
    return {"X": X, "y": y, "edges": edges}


@app.command()
def solve(
    problem_file: Path = typer.Argument(..., help="PROBLEM.json: lasso or network_lasso, its data files and lam."),
    out: Path = typer.Option(None, "--out", help="Write the last iterate as .npy."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Run Prox-SGD (lasso) or RIP (network_lasso) and report F at the last iterate and at the uniform average."""
    spec = read_problem(problem_file)
    if out is not None:
        check_output(out, "--out", inputs=problem_files(spec, problem_file))
    data = load_data(spec, problem_file.parent)
    if spec["iterations"] * data["X"].size / max(len(data["y"]), 1) > MAX_WORK:
        raise InputError(f"{problem_file}: iterations x problem size is over the limit of {MAX_WORK:.0e}")
    if spec["reference"]:
        check_count("reference: X values (cvxpy)", data["X"].size, MAX_REFERENCE_VALUES)
    import torch

    from tasks.prox.problems import Lasso, NetworkLasso
    from tasks.prox.stochastic import horizon_step, run_prox

    X, y = torch.from_numpy(data["X"]), torch.from_numpy(data["y"])
    built = (Lasso(X, y, spec["lam"]) if spec["problem"] == "lasso"
             else NetworkLasso(X, y, torch.from_numpy(data["edges"]), spec["lam"]))
    gamma = horizon_step(spec["c"], built.smoothness, spec["iterations"])
    run = run_prox(built, torch.tensor([gamma], dtype=torch.float64), spec["iterations"],
                   torch.Generator().manual_seed(spec["seed"]))
    summary = {"problem": spec["problem"], "iterations": spec["iterations"], "step": gamma,
               "F_last": float(built.value(run.last)[0]), "F_average": float(built.value(run.average)[0]),
               "time_s": run.wall_s, "out": str(out) if out else None}
    if spec["reference"]:
        from tasks.prox.reference import lasso_optimum, network_lasso_optimum

        reference = (lasso_optimum(data["X"], data["y"], spec["lam"]) if spec["problem"] == "lasso"
                     else network_lasso_optimum(data["X"], data["y"], data["edges"], spec["lam"]))
        summary |= {"F_star": float(built.value(torch.from_numpy(reference["x"])[None])[0]),
                    "reference_solver": str(reference["solver"])}
    if out is not None:
        with staged_output(out, "--out") as temporary, open(temporary, "wb") as handle:
            np.save(handle, run.last[0].numpy())  # a file, not a name: np.save would add .npy to a name without it
    if as_json:
        print(json.dumps(summary))
        return
    console().print(f"{spec['problem']}: {spec['iterations']} iterations, F(last) {summary['F_last']:.6g}, "
                    f"F(average) {summary['F_average']:.6g}"
                    + (f", F* {summary['F_star']:.6g} ({summary['reference_solver']})" if spec["reference"] else "")
                    + f", {run.wall_s:.2f} s" + (f" -> {out}" if out else ""))
