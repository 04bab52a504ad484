"""NCRS: noisy pairwise-comparison random search for smooth nonconvex optimization (ICML 2026).

Stages: generate (active-subspace instances per (d, k): evaluation seeds 0.. and calibration seeds 100..),
solve (per cell on worker processes: NCRS, dueling NGD and exact-comparison search under the uniform-margin
oracle, each step calibrated on the calibration instances and frozen; CMA-ES on comparison ranks and nevergrad's
(1+1)-ES on values; single vote against majority voting under the gap-dependent oracles; the k-scaling cells),
evaluate (claims C1-C3, report R4, plots, summary table).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from prefect import flow

from flows.runtime import task_runner
from flows.stage_task import stage_task
from tasks.comparison.oracles import Noise
from tasks.core.io import write_csv, write_json
from tasks.core.seeding import derive_seed
from tasks.core.stage import StageContext, StageReport

from . import plots
from .claims import claims as paper_claims
from .experiments import (CALIBRATION_OFFSET, calibrated_run, library_runs, load_instances, make_instances,
                          save_instances, voting_run)
from .params import Params

MARGIN_METHODS = ("ncrs", "ngd")


def instance_name(d: int, k: int, z0_norm: float | None = None) -> str:
    return f"problem_d{d}_k{k}" + ("" if z0_norm is None else f"_norm{z0_norm:g}") + ".npz"


def instance_sets(params: Params) -> list[tuple[int, int, float | None, int]]:
    """(d, k, z0_norm, evaluation seeds) of every instance file the solve stage reads."""
    sets = {(d, params.k, None): params.margin.seeds for d in params.margin.dims}
    g = params.gap_oracles
    sets[(g.dim, params.k, None)] = max(sets.get((g.dim, params.k, None), 0), g.seeds)
    for k in params.k_scaling.ks:
        sets[(params.k_scaling.dim, k, params.k_scaling.z0_norm)] = params.k_scaling.seeds
    return [(d, k, norm, seeds) for (d, k, norm), seeds in sets.items()]


def _save(path: Path, run: dict) -> None:
    np.savez(path, **{key: np.asarray(value) for key, value in run.items()})


def _load(path: Path) -> dict:
    with np.load(path) as data:
        return {key: data[key].item() if data[key].ndim == 0 else data[key] for key in data.files}


# ---------------------------------------------------------------- generate

@flow(name="ncrs-generate", task_runner=task_runner())
def generate(params: Params, context: StageContext) -> StageReport:
    folder = context.out("problems")
    folder.mkdir(parents=True)
    calibration = list(range(CALIBRATION_OFFSET, CALIBRATION_OFFSET + params.margin.calibration_seeds))
    for d, k, norm, seeds in instance_sets(params):
        save_instances(folder / instance_name(d, k, norm), make_instances(d, k, list(range(seeds)), params.seed,
                                                                          params.z0_scale, norm),
                       make_instances(d, k, calibration, params.seed, params.z0_scale, norm))
    return StageReport(metrics={"instance_files": len(instance_sets(params))})


# ---------------------------------------------------------------- solve

@stage_task
def solve_margin(problem: Path, out: Path, params: Params, method: str, p: float, seed: int, budget: int) -> dict:
    inst, cal = load_instances(problem)
    noise = Noise("margin", p=p)
    run = calibrated_run(method, inst, cal, noise, params.margin.alphas, budget, params.epsilon, seed,
                         params.margin.ngd_nu)
    _save(out, {key: value for key, value in run.items() if key != "calibration_scores"}
          | {"calibration_N": [s[0] for s in run["calibration_scores"]]})
    return {"step": run["step"], "wall_time_s": run["wall_time_s"]}


@stage_task
def solve_libraries(problem: Path, folder: Path, params: Params, d: int, seed: int) -> dict:
    inst, cal = load_instances(problem)
    lib = params.libraries
    runs = library_runs(inst, cal, lib.margin, lib.sigmas, params.margin.budget, params.epsilon, seed)
    for method, run in runs.items():
        _save(folder / f"{method}_margin{lib.margin:g}_d{d}.npz",
              {key: value for key, value in run.items() if key != "calibration_scores"})
    return {method: run["step"] if np.isfinite(run["step"]) else None for method, run in runs.items()}


@stage_task
def solve_voting(problem: Path, out: Path, params: Params, oracle: str, votes: int, seed: int) -> dict:
    g = params.gap_oracles
    inst, _ = load_instances(problem)
    inst.A, inst.x0 = inst.A[: g.seeds], inst.x0[: g.seeds]
    noise = Noise(oracle, p_max=g.p_max, kappa=g.kappa, tau=g.tau)
    run = voting_run(inst, noise, g.alpha, votes, g.budget, g.epsilon, seed, judge_votes=g.votes)
    _save(out, run)
    return {"wrong_fraction": float(np.mean(run["wrong_fraction"])), "wall_time_s": run["wall_time_s"]}


@flow(name="ncrs-solve", task_runner=task_runner("process"))
def solve(params: Params, context: StageContext) -> StageReport:
    problems, folder = context.data("problems"), context.out("runs")
    folder.mkdir(parents=True)
    m, k, futures = params.margin, params.k, {}
    for d in sorted(m.dims, reverse=True):
        problem = problems / instance_name(d, k)
        for p in m.margins:
            for method in MARGIN_METHODS:
                futures[f"{method}_margin{p:g}_d{d}"] = solve_margin.submit(
                    problem, folder / f"{method}_margin{p:g}_d{d}.npz", params, method, p,
                    derive_seed(params.seed, method, d, k, p), m.budget)
        # exact comparisons: the noiseless reference, whatever p
        futures[f"exact_d{d}"] = solve_margin.submit(problem, folder / f"exact_margin{params.libraries.margin:g}_d{d}.npz",
                                                     params, "exact", 0.5, derive_seed(params.seed, "exact", d, k), m.budget)
        futures[f"libraries_d{d}"] = solve_libraries.submit(problem, folder, params, d,
                                                            derive_seed(params.seed, "libraries", d, k))
    g = params.gap_oracles
    for oracle in g.oracles:
        for name, votes in (("single", 1), ("voting", g.votes)):
            futures[f"voting_{oracle}_{name}"] = solve_voting.submit(
                problems / instance_name(g.dim, k), folder / f"gap_{oracle}_{name}.npz", params, oracle, votes,
                derive_seed(params.seed, "gap", oracle))
    s = params.k_scaling
    for kk in s.ks:
        futures[f"k{kk}"] = solve_margin.submit(problems / instance_name(s.dim, kk, s.z0_norm),
                                                folder / f"kscaling_k{kk}.npz", params, "ncrs", s.margin,
                                                derive_seed(params.seed, "kscaling", kk), s.budget)
    done = {name: f.result() for name, f in futures.items()}
    steps = {name: row["step"] for name, row in done.items() if isinstance(row, dict) and "step" in row}
    write_json(folder / "alpha_choice.json", steps | {name: row for name, row in done.items() if name.startswith("libraries")})
    return StageReport(metrics={f"step.{name}": value for name, value in steps.items()}
                       | {f"wrong_fraction.{name}": row["wrong_fraction"] for name, row in done.items()
                          if name.startswith("voting")})


# ---------------------------------------------------------------- evaluate

def load_cells(params: Params, folder: Path) -> tuple[dict, dict, dict]:
    """(cells (method, d, p) -> run, voting: oracle -> {single, voting}, k_cells: k -> run)."""
    cells = {}
    for d in params.margin.dims:
        for p in params.margin.margins:
            for method in MARGIN_METHODS:
                cells[(method, d, p)] = _load(folder / f"{method}_margin{p:g}_d{d}.npz")
        lib = params.libraries.margin
        for method in ("exact", "cma_es", "one_plus_one"):
            cells[(method, d, lib)] = _load(folder / f"{method}_margin{lib:g}_d{d}.npz")
    voting = {oracle: {name: _load(folder / f"gap_{oracle}_{name}.npz") for name in ("single", "voting")}
              for oracle in params.gap_oracles.oracles}
    k_cells = {k: _load(folder / f"kscaling_k{k}.npz") for k in params.k_scaling.ks}
    return cells, voting, k_cells


@flow(name="ncrs-evaluate", task_runner=task_runner())
def evaluate(params: Params, context: StageContext) -> StageReport:
    folder = context.data("runs")
    cells, voting, k_cells = load_cells(params, folder)
    claims = paper_claims(cells, sorted(params.margin.dims), params.margin.margins, voting, params.gap_oracles.votes,
                          k_cells, params.decide_claims)
    rows = [{"method": method, "d": d, "p": p, "step": run.get("step"), "median_N": float(np.median(run["hit"])),
             "reached": int(np.isfinite(run["hit"]).sum()), "instances": len(run["hit"]),
             "median_best_grad": float(np.median(run["best_grad"]))} for (method, d, p), run in cells.items()]
    write_csv(context.out("summary.csv"), rows)
    plots_folder = context.out("plots")
    plots.n_against_d(cells, sorted(params.margin.dims), params.libraries.margin, plots_folder / "n_against_d.png")
    plots.grad_traces({f"{m} p={p:g}": cells[(m, max(params.margin.dims), p)] for m in MARGIN_METHODS
                       for p in params.margin.margins}, f"d = {max(params.margin.dims)}: median gradient norm",
                      plots_folder / "grad_traces.png")
    plots.grad_traces({f"{oracle} {name}": run for oracle, runs in voting.items() for name, run in runs.items()},
                      f"gap-dependent oracles, d = {params.gap_oracles.dim}", plots_folder / "voting_traces.png")
    metrics = {f"{method}.d{d}.p{p:g}.median_N": float(np.median(run["hit"])) for (method, d, p), run in cells.items()}
    return StageReport(metrics={key: value for key, value in metrics.items() if np.isfinite(value)},
                       claims=claims)


STAGES = {"generate": generate, "solve": solve, "evaluate": evaluate}
