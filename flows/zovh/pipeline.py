"""ZoVH: zeroth-order Hessian estimation through a single-step policy-optimization lens (ICML 2026).

Stages: generate (per seed: the quadratic's A, b and the evaluation paths of both regimes for the three study
functions; the descent start points), solve (the Hessian-error study per seed and the descent runs per
(function, method, seed) on worker processes), evaluate (mean errors, best steps, claims C1-C5, tables, plots).
"""
from __future__ import annotations

import csv
import json
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
from tasks.zeroth.functions import hessian_study_functions, random_quadratic

from . import plots
from .claims import claims as paper_claims
from .claims import mean_errors, seed_errors
from .experiments import best_lr, run_method, seed_study, time_methods
from .params import HessianStudy, Method, Optimisation, Params
from .points import REGIMES, path, start

FUNCTIONS = ("quadratic", "rosenbrock", "styblinski_tang")


def generator(*keys) -> torch.Generator:
    return torch.Generator().manual_seed(derive_seed(*keys))


# ---------------------------------------------------------------- generate

@stage_task
def make_seed(folder: Path, h: HessianStudy, base: int, k: int) -> dict:
    single_torch_thread()
    A, b = random_quadratic(h.d, generator(base, "quadratic", k))
    functions = hessian_study_functions(A, b, h.rosenbrock_alpha)
    arrays = {"A": A.numpy(), "b": b.numpy()}
    for name in FUNCTIONS:
        for regime in REGIMES:
            x0 = start(functions[name], regime, generator(base, "start", name, regime, k), h.near_scale, h.radius)
            arrays[f"{name}.{regime}"] = path(functions[name], x0, h.reuse_histories + h.points, h.path_step).numpy()
    np.savez(folder / f"seed_{k}.npz", **arrays)
    return {f"{name}.{regime}.grad_norm_start": float(np.linalg.norm(arrays[f"{name}.{regime}"][1] - arrays[f"{name}.{regime}"][0]))
            for name in FUNCTIONS for regime in REGIMES} | {"cond_A": float(np.linalg.cond(arrays["A"]))}


@flow(name="zovh-generate", task_runner=task_runner())
def generate(params: Params, context: StageContext) -> StageReport:
    folder = context.out("problems")
    folder.mkdir(parents=True)
    h, o = params.hessian, params.optimisation
    rows = [f.result() for f in [make_seed.submit(folder, h, params.seed, k) for k in range(h.seeds)]]
    x0 = np.stack([torch.randn(o.d, generator=generator(params.seed, "descent-x0", k), dtype=torch.float64).numpy()
                   for k in range(o.seeds)])
    np.save(folder / "descent_x0.npy", x0)
    return StageReport(metrics={"hessian.d": h.d, "hessian.seeds": h.seeds, "optimisation.d": o.d,
                                "cond_A": float(np.mean([r["cond_A"] for r in rows]))})


# ---------------------------------------------------------------- solve

def load_seed(path: Path, h: HessianStudy):
    with np.load(path) as data:
        arrays = {key: torch.from_numpy(data[key]) for key in data.files}
    functions = hessian_study_functions(arrays["A"], arrays["b"], h.rosenbrock_alpha)
    return functions, {(name, regime): arrays[f"{name}.{regime}"] for name in FUNCTIONS for regime in REGIMES}


@stage_task
def hessian_seed(problem: Path, h: HessianStudy, base: int, k: int) -> list[dict]:
    single_torch_thread()
    functions, paths = load_seed(problem, h)
    rows = seed_study(functions, paths, list(h.estimators), h.K, list(h.queries_grid), h.mu, h.noise_std,
                      h.reuse_histories, derive_seed(base, "hessian", k))
    return [row | {"seed": k} for row in rows]


@stage_task
def descent_run(out: Path, o: Optimisation, function: str, method: Method, x0: np.ndarray, seed: int) -> dict:
    single_torch_thread()
    result = run_method(o, function, method, torch.from_numpy(x0), seed)
    np.savez(out, **result, lrs=np.array(o.lrs))
    return {"wall_per_iteration_s": result["wall_per_iteration_s"], "guard_drops": result["guard_drops"]}


@stage_task
def timing(o: Optimisation, function: str, x0: np.ndarray, seed: int) -> dict[str, float]:
    single_torch_thread()
    return time_methods(o, function, torch.from_numpy(x0), seed, iterations=min(100, o.iterations))


@flow(name="zovh-solve", task_runner=task_runner("process"))
def solve(params: Params, context: StageContext) -> StageReport:
    problems, folder = context.data("problems"), context.out("runs")
    (folder / "descent").mkdir(parents=True)
    h, o = params.hessian, params.optimisation
    x0 = np.load(problems / "descent_x0.npy")
    # the descent runs first: they are the longer tasks, and the study's seeds fill in behind them
    descents = {(fn, m.name, k): descent_run.submit(folder / "descent" / f"{fn}_{m.name}_{k}.npz", o, fn, m, x0[k],
                                                    derive_seed(params.seed, "descent", fn, k))
                for fn in o.functions for m in o.methods for k in range(o.seeds)}
    studies = [hessian_seed.submit(problems / f"seed_{k}.npz", h, params.seed, k) for k in range(h.seeds)]
    rows = [row for future in studies for row in future.result()]
    write_csv(folder / "hessian_errors.csv", rows)
    done = {key: f.result() for key, f in descents.items()}
    # after every run has finished, so that no other task of this stage competes with the timed loops
    timings = {fn: timing.submit(o, fn, x0[0], derive_seed(params.seed, "timing", fn)).result() for fn in o.functions}
    write_json(folder / "timing.json", timings)
    return StageReport(metrics={"hessian.estimates": len(rows),
                                "descent.guard_drops": float(sum(r["guard_drops"] for r in done.values())),
                                "descent.runs": len(done) * len(o.lrs)})


# ---------------------------------------------------------------- evaluate

def read_rows(path: Path) -> list[dict]:
    with open(path) as handle:
        return [{k: (v if k in ("function", "regime", "estimator") else float(v)) for k, v in row.items()}
                for row in csv.DictReader(handle)]


PER_SEED = ("median_ratio_by_lr", "final_ratio_by_seed", "run_wall_per_iteration_by_seed")  # lists: not CSV columns


def descent_summary(folder: Path, o: Optimisation, timings: dict) -> tuple[dict, dict]:
    """function -> method -> best lr, its median final ratio, the paper-lr median ratio, the controlled seconds per
    iteration (`timings`) and the runs' own, with the per-seed numbers the claims' intervals need; and the median
    curve at the best lr."""
    summary, curves = {}, {}
    for fn in o.functions:
        summary[fn], curves[fn] = {}, {}
        for m in o.methods:
            runs = [dict(np.load(folder / f"{fn}_{m.name}_{k}.npz")) for k in range(o.seeds)]
            ratios = np.stack([r["final_ratio"] for r in runs])
            lr, value = best_lr(list(o.lrs), ratios)
            column = list(o.lrs).index(lr)
            summary[fn][m.name] = {"best_lr": lr, "best_median_ratio": value,
                                   "paper_lr_median_ratio": float(np.median(ratios[:, list(o.lrs).index(o.paper_lr)])),
                                   "median_ratio_by_lr": np.median(ratios, 0).tolist(),
                                   "final_ratio_by_seed": ratios,
                                   "wall_per_iteration_s": timings[fn][m.name],
                                   "run_wall_per_iteration_s": float(np.median([r["wall_per_iteration_s"] for r in runs])),
                                   "run_wall_per_iteration_by_seed": [float(r["wall_per_iteration_s"]) for r in runs],
                                   "queries_per_iteration": int(runs[0]["queries_per_iteration"]),
                                   "guard_drops": int(sum(int(r["guard_drops"]) for r in runs))}
            curves[fn][m.name] = (runs[0]["steps"], np.median(np.stack([r["values"][column] for r in runs]), 0))
    return summary, curves


@flow(name="zovh-evaluate", task_runner=task_runner())
def evaluate(params: Params, context: StageContext) -> StageReport:
    runs = context.data("runs")
    h, o = params.hessian, params.optimisation
    rows = read_rows(runs / "hessian_errors.csv")
    errors = mean_errors(rows)
    descent, curves = descent_summary(runs / "descent", o, json.loads((runs / "timing.json").read_text()))
    claims = paper_claims(seed_errors(rows), list(FUNCTIONS), h.K, descent, list(o.lrs), params.decide_claims)
    write_csv(context.out("hessian_errors.csv"),
              [{"function": fn, "regime": regime, "estimator": est, "K": K, "mean_frob_err": e}
               for (fn, regime, est, K), e in sorted(errors.items())])
    write_csv(context.out("descent.csv"),
              [{"function": fn, "method": m, **{k: v for k, v in row.items() if k not in PER_SEED}}
               for fn, methods in descent.items() for m, row in methods.items()])
    folder = context.out("plots")
    plots.error_vs_queries(errors, list(FUNCTIONS), list(h.estimators), folder / "error_vs_queries.png")
    plots.error_by_regime(errors, list(FUNCTIONS), list(h.estimators), h.K, folder / "error_by_regime.png")
    plots.descent_curves(curves, folder / "descent.png")
    metrics = {f"{fn}.{regime}.{est}.K{K}.frob_err": e for (fn, regime, est, K), e in errors.items()}
    metrics |= {f"descent.{fn}.{m}.best_median_ratio": row["best_median_ratio"]
                for fn, methods in descent.items() for m, row in methods.items()}
    return StageReport(metrics=metrics, claims=claims)


STAGES = {"generate": generate, "solve": solve, "evaluate": evaluate}
