"""`papers metadistill minimize`: a black-box function minimised by the distilled LES (or the baseline LES, or
CMA-ES), like scipy.optimize: MODULE:FUNCTION, a function of a 1-D array returning a float, or a BBOB problem.

Every option is checked before any work; the user's function runs inside a guard that names it and the fault
(objective.py). torch, ioh and the students are imported inside the command, so that --help starts at once.
"""
from __future__ import annotations

import json
from pathlib import Path

import typer

from tasks.core.console import console
from tasks.core.inputs import InputError, check_choice, check_count, check_number, check_range
from tasks.core.io import repo_root

from .paper import PAPER

app = typer.Typer(help=PAPER.command.summary,
                  no_args_is_help=True)
STUDENTS = ("md", "base", "cmaes")
MAX_DIM, MAX_POPSIZE, MAX_BUDGET, MAX_CELLS = 10_000, 10_000, 10_000_000, 10_000_000
STUDENT_POPSIZE = 32  # the learned students' population (the default profile's N)
TRAIN_HINT = "train it with `papers run metadistill`, or pass --checkpoint or --student cmaes"


def parse_bbob(text: str) -> tuple[int, int]:
    fid, _, instance = text.partition(":")
    try:
        fid, instance = int(fid), int(instance)
    except ValueError:
        raise InputError(f"--bbob: expected FID:INSTANCE (two integers), got {text!r}") from None
    check_range("--bbob function id", fid, low=1, high=24)
    check_range("--bbob instance", instance, low=1, high=1_000_000)
    return fid, instance


def resolve_popsize(popsize: int | None, student: str, dim: int) -> int:
    """--popsize as given, else `cma`'s default population for cmaes and 32 for the learned students."""
    from tasks.blackbox.teachers import default_popsize

    if popsize is not None:
        return popsize
    return default_popsize(dim) if student == "cmaes" else STUDENT_POPSIZE


def check_options(target, bbob, dim, budget, popsize, lower, upper, seed, ssft, student) -> None:
    if (target is None) == (bbob is None):
        raise InputError("MODULE:FUNCTION or --bbob FID:INSTANCE: give exactly one")
    check_choice("--student", student, STUDENTS)
    check_range("--dim", dim, low=1, high=MAX_DIM)
    popsize = resolve_popsize(popsize, student, dim)
    check_range("--popsize", popsize, low=4, high=MAX_POPSIZE)
    check_count("--popsize x --dim", popsize * dim, MAX_CELLS, " numbers per population")
    check_range("--budget", budget, low=2 * popsize, high=MAX_BUDGET,
                note=f"evaluations, at least two populations of --popsize {popsize}")
    check_number("--lower", lower)
    check_number("--upper", upper)
    if not lower < upper:
        raise InputError(f"--lower/--upper: need lower < upper, got {lower} and {upper}")
    check_range("--seed", seed, low=0)
    check_range("--ssft", ssft, low=0, high=100, note="generations back; 0 = off")
    if ssft and student == "cmaes":
        raise InputError("--ssft: test-time fine-tuning applies to the learned students (md, base), not cmaes")


def load_student(student: str, checkpoint: Path | None):
    """The student network: --checkpoint, else the registered `metadistill-les_<student>` of this checkout's
    MLflow store, else the clone's committed default (which one is said on stderr)."""
    import tempfile

    from tasks.core.tracking import resolve_model  # imports mlflow: only for a learned student

    from .les import load

    if checkpoint is not None and not checkpoint.is_file():
        raise InputError(f"--checkpoint {checkpoint}: no such file; {TRAIN_HINT}")
    with tempfile.TemporaryDirectory() as folder:
        if checkpoint is None:
            try:
                path = resolve_model(f"metadistill-les_{student}", Path(folder), _root())
            except InputError as error:
                raise InputError(f"--student {student}: {error}; {TRAIN_HINT}") from None
        else:
            path = checkpoint
        try:
            return load(path)
        except Exception as error:
            raise InputError(f"--checkpoint {path}: not a metadistill student file ({type(error).__name__})") from None


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
    popsize: int = typer.Option(None, "--popsize", help="Population size N (default: 32 for md and base, "
                                "`cma`'s default 4 + floor(3 ln d) for cmaes)."),
    lower: float = typer.Option(-5.0, "--lower", help="Lower bound of every coordinate (BBOB: -5)."),
    upper: float = typer.Option(5.0, "--upper", help="Upper bound of every coordinate (BBOB: 5)."),
    seed: int = typer.Option(0, "--seed", help="Seed (>= 0)."),
    ssft: int = typer.Option(0, "--ssft", help="Test-time self-supervised fine-tuning against J generations back "
                             "(0 = off; the paper's md_j1 is 1)."),
    checkpoint: Path = typer.Option(None, "--checkpoint", help="A student file of the train stage (default: "
                                    "metadistill-les_<student> of this checkout's MLflow store, else the clone's "
                                    "committed default)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Minimise MODULE:FUNCTION (or --bbob FID:INSTANCE) over the box lower..upper in every coordinate within
    --budget evaluations."""
    check_options(target, bbob, dim, budget, popsize, lower, upper, seed, ssft, student)
    popsize = resolve_popsize(popsize, student, dim)
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
        model = load_student(student, checkpoint)
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
