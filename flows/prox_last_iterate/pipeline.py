"""Last-iterate convergence of stochastic proximal algorithms (ICML 2026).

Stages: generate (Q1 the network Lasso instance and Q2 the diabetes Lasso, each with its reference optimum: cvxpy
Clarabel / scikit-learn, solver and tolerances recorded), solve (per (problem, horizon T): every (seed, c) run in one
batch on worker processes: last, uniform-average and suffix-average gaps, the last iterate's gap along a log grid),
evaluate (tables over seeds, claims C1-C3 with fitted log-log slopes, each decided on bootstrap intervals over
seeds, plots).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from prefect import flow

from flows.runtime import task_runner
from flows.stage_task import stage_task
from tasks.core.device import single_torch_thread
from tasks.core.io import write_csv, write_json
from tasks.core.seeding import derive_seed
from tasks.core.stage import StageContext, StageReport
from tasks.prox.stochastic import horizon_step, run_prox

from . import plots, problems
from .claims import claims as paper_claims
from .params import Q1, Q2, Params, Runs
from .rates import slope_fit

PROBLEMS = (Q1, Q2)
OUTPUTS = ("last", "average", "suffix_average")


def runs_of(params: Params, problem: str) -> Runs:
    return getattr(params, problem)


# ---------------------------------------------------------------- generate

@stage_task
def make_instance(folder: Path, params: Params, problem: str) -> dict:
    instance = (problems.make_netlasso(params.netlasso, derive_seed(params.seed, Q1)) if problem == Q1
                else problems.make_lasso_diabetes(params.lasso_diabetes))
    record = problems.save(folder, problem, instance)
    built, f_star = problems.load(folder, problem)
    return record | {"F_star": f_star, "smoothness": built.smoothness,
                     "shape": list(instance["X"].shape), "edges": len(instance.get("edges", []))}


@flow(name="prox_last_iterate-generate", task_runner=task_runner())
def generate(params: Params, context: StageContext) -> StageReport:
    folder = context.out("problems")
    folder.mkdir(parents=True)
    records = {problem: make_instance.submit(folder, params, problem) for problem in PROBLEMS}
    manifest = {problem: future.result() for problem, future in records.items()}
    write_json(folder / "references.json", manifest)
    return StageReport(metrics={f"{p}.{k}": float(r[k]) for p, r in manifest.items()
                                for k in ("F_star", "smoothness", "solve_s", "edges")})


# ---------------------------------------------------------------- solve

@stage_task
def run_horizon(problem_folder: Path, out: Path, problem: str, T: int, cs: list[float], seeds: int, reference_T: int,
                record_points: int, seed: int) -> dict:
    """Every (seed, c) run at horizon T in one batch (run b = seed * len(cs) + c index)."""
    single_torch_thread()
    built, f_star = problems.load(problem_folder, problem)
    gammas = torch.tensor([horizon_step(c, built.smoothness, T, reference_T) for _ in range(seeds) for c in cs],
                          dtype=torch.float64)
    result = run_prox(built, gammas, T, torch.Generator().manual_seed(seed), record_points)
    shape = (seeds, len(cs))
    gaps = {name: (built.value(getattr(result, name)) - f_star).reshape(shape).numpy() for name in OUTPUTS}
    record = (result.record_values - f_star).reshape(*shape, -1).numpy()
    np.savez(out, **gaps, record_steps=np.array(result.record_steps), record_gaps=record, gammas=gammas.numpy(),
             wall_s=result.wall_s, f_star=f_star)
    return {"wall_s": result.wall_s, "min_gap": float(min(record.min(), *(g.min() for g in gaps.values())))}


@flow(name="prox_last_iterate-solve", task_runner=task_runner("process"))
def solve(params: Params, context: StageContext) -> StageReport:
    problem_folder, folder = context.data("problems"), context.out("runs")
    folder.mkdir(parents=True)
    jobs = sorted(((p, T) for p in PROBLEMS for T in runs_of(params, p).horizons), key=lambda job: -job[1])
    futures = {(p, T): run_horizon.submit(problem_folder, folder / f"{p}_T{T}.npz", p, T, list(runs_of(params, p).cs),
                                          params.seeds, params.reference_T, params.record_points,
                                          derive_seed(params.seed, p, T))
               for p, T in jobs}  # the longest horizons first: they set the stage's length
    done = {key: f.result() for key, f in futures.items()}
    return StageReport(metrics={f"{p}.T{T}.wall_s": r["wall_s"] for (p, T), r in done.items()}
                       | {"min_gap": min(r["min_gap"] for r in done.values())})


# ---------------------------------------------------------------- evaluate

def load_runs(folder: Path, params: Params) -> dict:
    """problem -> T -> the run file's arrays (gaps (seeds, cs) per output, record_gaps (seeds, cs, points))."""
    return {p: {T: dict(np.load(folder / f"{p}_T{T}.npz")) for T in runs_of(params, p).horizons} for p in PROBLEMS}


def table(runs: dict, params: Params) -> list[dict]:
    rows = []
    for p, by_T in runs.items():
        for T, run in by_T.items():
            for ci, c in enumerate(runs_of(params, p).cs):
                rows.append({"problem": p, "c": c, "T": T, "gamma": float(run["gammas"][ci]),
                             **{f"{name}_gap_mean": float(run[name][:, ci].mean()) for name in OUTPUTS},
                             **{f"{name}_gap_std": float(run[name][:, ci].std()) for name in OUTPUTS},
                             "last_beats_average_seeds": int((run["last"][:, ci] <= run["average"][:, ci]).sum())})
    return rows


def slopes(runs: dict, params: Params) -> dict:
    """problem -> c -> output -> fitted slope with its bootstrap interval over seeds (rates.slope_fit)."""
    out = {}
    for p, by_T in runs.items():
        horizons = sorted(by_T)
        out[p] = {c: {name: slope_fit(horizons, [by_T[T][name][:, ci] for T in horizons],
                                      derive_seed(params.seed, "bootstrap", "slope", p, c, name))
                      for name in OUTPUTS}
                  for ci, c in enumerate(runs_of(params, p).cs)}
    return out


def slope_row(problem: str, c: float, output: str, fit: dict) -> dict:
    interval = fit["interval"]
    return {"problem": problem, "c": c, "output": output, "slope": fit["slope"],
            "low": None if interval is None else interval.low, "high": None if interval is None else interval.high,
            "seeds": fit["seeds"]}


@flow(name="prox_last_iterate-evaluate", task_runner=task_runner())
def evaluate(params: Params, context: StageContext) -> StageReport:
    runs = load_runs(context.data("runs"), params)
    rows, fitted = table(runs, params), slopes(runs, params)
    claims = paper_claims(runs, fitted, params, params.decide_claims)
    write_csv(context.out("gaps.csv"), rows)
    write_csv(context.out("slopes.csv"), [slope_row(p, c, name, fit) for p, by_c in fitted.items()
                                          for c, by_output in by_c.items() for name, fit in by_output.items()])
    folder = context.out("plots")
    for p in PROBLEMS:
        plots.gap_vs_horizon([r for r in rows if r["problem"] == p], p, folder / f"{p}_gap_vs_T.png")
        plots.gap_along_run(runs[p], list(runs_of(params, p).cs), p, folder / f"{p}_along_run.png")
    metrics = {f"{r['problem']}.c{r['c']:g}.T{r['T']}.{name}_gap": r[f"{name}_gap_mean"] for r in rows for name in OUTPUTS}
    metrics |= {f"{p}.c{c:g}.last_slope": fit["last"]["slope"] for p, by_c in fitted.items() for c, fit in by_c.items()}
    return StageReport(metrics=metrics, claims=claims)


STAGES = {"generate": generate, "solve": solve, "evaluate": evaluate}
