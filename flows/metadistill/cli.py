"""`papers metadistill minimize`: a black-box function minimised by the distilled LES (or the baseline LES, or
CMA-ES), like scipy.optimize: MODULE:FUNCTION, a function of a 1-D array returning a float, or a BBOB problem.

Every option is checked before any work; the user's function runs inside a guard that names it and the fault
(objective.py). torch, ioh and the students are imported inside the command, so that --help starts at once.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import typer

from tasks.core.console import console
from tasks.core.inputs import InputError, check_count
from tasks.core.io import repo_root

from .paper import PAPER

app = typer.Typer(help=PAPER.commands["metadistill"].summary,
                  no_args_is_help=True)
STUDENTS = {"md": "les_md.pt", "base": "les_base.pt", "cmaes": None}
MAX_DIM, MAX_POPSIZE, MAX_BUDGET, MAX_CELLS = 10_000, 10_000, 10_000_000, 10_000_000
MODELS = Path("data") / "metadistill" / "models"
TRAIN_HINT = "train it with `papers run metadistill`, or pass --checkpoint or --student cmaes"


def parse_bbob(text: str) -> tuple[int, int]:
    fid, sep, instance = text.partition(":")
    try:
        fid, instance = int(fid), int(instance)
    except ValueError:
        raise InputError(f"--bbob: expected FID:INSTANCE (two integers), got {text!r}") from None
    if not sep or not 1 <= fid <= 24:
        raise InputError(f"--bbob: the function id must be in 1..24, got {text!r}")
    if not 1 <= instance <= 1_000_000:
        raise InputError(f"--bbob: the instance must be in 1..1000000, got {instance}")
    return fid, instance


def check_options(target, bbob, dim, budget, popsize, lower, upper, seed, ssft, student) -> None:
    if (target is None) == (bbob is None):
        raise InputError("MODULE:FUNCTION or --bbob FID:INSTANCE: give exactly one")
    if student not in STUDENTS:
        raise InputError(f"--student: must be one of {', '.join(STUDENTS)}, got {student!r}")
    if dim < 1:
        raise InputError(f"--dim: must be >= 1, got {dim}")
    check_count("--dim", dim, MAX_DIM)
    if popsize < 4:
        raise InputError(f"--popsize: must be >= 4, got {popsize}")
    check_count("--popsize", popsize, MAX_POPSIZE)
    check_count("--popsize x --dim", popsize * dim, MAX_CELLS, " numbers per population")
    if budget < 2 * popsize:
        raise InputError(f"--budget: must hold two populations (>= {2 * popsize}), got {budget}")
    check_count("--budget", budget, MAX_BUDGET, " evaluations")
    for name, value in (("--lower", lower), ("--upper", upper)):
        if not math.isfinite(value):
            raise InputError(f"{name}: must be finite, got {value}")
    if not lower < upper:
        raise InputError(f"--lower/--upper: need lower < upper, got {lower} and {upper}")
    if seed < 0:
        raise InputError(f"--seed: must be >= 0, got {seed}")
    if not 0 <= ssft <= 100:
        raise InputError(f"--ssft: must be in 0..100 (generations back; 0 = off), got {ssft}")
    if ssft and student == "cmaes":
        raise InputError("--ssft: test-time fine-tuning applies to the learned students (md, base), not cmaes")


def checkpoint_path(student: str, checkpoint: Path | None) -> Path:
    path = checkpoint if checkpoint is not None else _root() / MODELS / STUDENTS[student]
    if not path.is_file():
        raise InputError(f"--checkpoint {path}: no such file; {TRAIN_HINT}")
    return path


def _root() -> Path:
    try:
        return repo_root(Path(__file__).parent)
    except FileNotFoundError:
        return Path.cwd()


@app.command()
def minimize(
    target: str = typer.Argument(None, metavar="MODULE:FUNCTION", help="f(x: 1-D numpy array) -> float, importable "
                                 "from the working directory."),
    bbob: str = typer.Option(None, "--bbob", help="Minimise BBOB function FID (1..24), IOH instance INSTANCE."),
    dim: int = typer.Option(..., "--dim", help=f"Dimension (1..{MAX_DIM:,})."),
    budget: int = typer.Option(..., "--budget", help="Function evaluations (no run exceeds it)."),
    student: str = typer.Option("md", "--student", help="md (distilled LES, default), base (LES meta-trained by "
                                "CMA-ES) or cmaes (the teacher, `cma`)."),
    popsize: int = typer.Option(32, "--popsize", help="Population size N."),
    lower: float = typer.Option(-5.0, "--lower", help="Lower bound of every coordinate (BBOB: -5)."),
    upper: float = typer.Option(5.0, "--upper", help="Upper bound of every coordinate (BBOB: 5)."),
    seed: int = typer.Option(0, "--seed", help="Seed (>= 0)."),
    ssft: int = typer.Option(0, "--ssft", help="Test-time self-supervised fine-tuning against J generations back "
                             "(0 = off; the paper's md_j1 is 1)."),
    checkpoint: Path = typer.Option(None, "--checkpoint", help="A student file of the train stage (default: the "
                                    "committed run's data/metadistill/models/les_<student>.pt)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Minimise MODULE:FUNCTION (or --bbob FID:INSTANCE) over the box lower..upper in every coordinate within
    --budget evaluations."""
    check_options(target, bbob, dim, budget, popsize, lower, upper, seed, ssft, student)
    import numpy as np

    from tasks.userdata.functions import load_function

    from .objective import SafeObjective
    from .rollout import populations_in_budget, run_cmaes, run_student

    problem = None
    if bbob is not None:
        from tasks.blackbox.bbob import BBOBProblem

        problem = BBOBProblem(*parse_bbob(bbob), dim)
        objective, name = SafeObjective(lambda x: problem(x[None])[0], problem.name), problem.name
        lo, hi = problem.lower, problem.upper
    else:
        objective, name = SafeObjective(load_function(target), target), target
        lo, hi = np.full(dim, lower), np.full(dim, upper)
    populations = populations_in_budget(popsize, budget)
    if student == "cmaes":
        run = run_cmaes(objective, lo, hi, popsize, populations, seed)
    else:
        from .les import load

        path = checkpoint_path(student, checkpoint)
        try:
            model = load(path)
        except Exception as error:
            raise InputError(f"--checkpoint {path}: not a metadistill student file ({type(error).__name__})") from None
        run = run_student(model, objective, lo, hi, popsize, populations, seed, ssft_j=ssft)
    summary = {"function": name, "student": student, "x": run.x_best.tolist(), "fun": run.f_best,
               "nfev": objective.evaluations, "generations": populations, "popsize": popsize,
               "time_s": run.wall_time_s}
    if problem is not None:
        summary |= {"f_opt": problem.f_opt, "precision": run.f_best - problem.f_opt}
    if as_json:
        print(json.dumps(summary))
        return
    console().print(f"{student}: f = {run.f_best:.6g} after {objective.evaluations} evaluations in "
                    f"{run.wall_time_s:.2f} s" + (f" (precision {summary['precision']:.3g})" if problem else ""))
