"""Riemannian dueling optimization (RDNGD / RDFW, ICML 2026): minimise on a manifold from comparisons alone.

Stages: generate (E1 Rayleigh instances per (n, seed), E2 SPD samples with their Karcher fixed-point reference,
E3 the simplex targets, interior and boundary optimum), solve (every method per instance and seed on worker
processes: RDNGD, its reversed control, Euclidean dueling NGD, RZO, pymanopt's RGD, optionally RDNGD with the theory
schedule; RRDNGD on an E2 case; RDFW on both simplex targets), evaluate (claims C1-C4, reports R5-R7, plots,
summary table).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from prefect import flow

from flows.runtime import task_runner
from flows.stage_task import stage_task
from tasks.comparison.dueling import rrdngd_phase_length
from tasks.comparison.geometry import SimplexGeometry
from tasks.comparison.objectives import KarcherCost, Rayleigh, SquaredDistance, karcher_mean, rayleigh_matrix, spd_samples
from tasks.core.claims import median_of
from tasks.core.io import write_csv
from tasks.core.seeding import derive_seed
from tasks.core.stage import StageContext, StageReport

from . import plots, summaries
from .claims import claims as paper_claims
from .experiments import karcher_runs, rayleigh_runs, simplex_run
from .params import Params
from .runs_io import load_runs, save_runs


def _instance_rng(params: Params, *keys) -> np.random.Generator:
    return np.random.default_rng(derive_seed(params.seed, *keys))


# ---------------------------------------------------------------- generate

@flow(name="riemannian_dueling-generate", task_runner=task_runner())
def generate(params: Params, context: StageContext) -> StageReport:
    folder = context.out("problems")
    folder.mkdir(parents=True)
    r = params.rayleigh
    for n in r.dims:
        for k in range(r.seeds):
            rng = _instance_rng(params, "rayleigh", n, k)
            A = rayleigh_matrix(n, rng, r.gap)
            x0 = rng.standard_normal(n)
            np.savez(folder / f"rayleigh_n{n}_s{k}.npz", A=A, x0=x0 / np.linalg.norm(x0), f_star=Rayleigh(A).minimum)
    metrics = {}
    for case in params.karcher.cases:
        S = spd_samples(case.n, case.m, _instance_rng(params, "karcher", case.n, case.m))
        X, residual, iterations = karcher_mean(S)
        f_ref = float(KarcherCost(S)(X))
        np.savez(folder / f"spd_n{case.n}.npz", S=S, X_ref=X, residual=residual, f_ref=f_ref)
        metrics |= {f"karcher.n{case.n}.residual": residual, f"karcher.n{case.n}.fixed_point_iterations": iterations,
                    f"karcher.n{case.n}.f_ref": f_ref}
    c, c_boundary, x_boundary = simplex_targets(params.simplex.n)
    f_boundary = float(SquaredDistance(c_boundary)(x_boundary))
    np.savez(folder / "simplex.npz", c=c, c_boundary=c_boundary, x_star_boundary=x_boundary, f_star_boundary=f_boundary)
    metrics |= {"simplex.boundary.f_star": f_boundary,
                "simplex.boundary.zero_coordinates": int(np.sum(x_boundary == 0))}
    return StageReport(metrics=metrics | {"rayleigh.instances": len(r.dims) * r.seeds})


def simplex_targets(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """E3's targets: c = (1..n)/sum, inside the simplex (the optimum x* = c is interior), and 2c - 1/n, which also
    sums to one but has negative coordinates, so its optimum x* (its Euclidean projection) lies on a face."""
    c = np.arange(1, n + 1) / (n * (n + 1) / 2)
    c_boundary = 2 * c - 1 / n
    return c, c_boundary, SimplexGeometry(n).to_manifold(c_boundary)


# ---------------------------------------------------------------- solve

@stage_task
def solve_rayleigh(problem: Path, out: Path, params: Params, n: int, k: int) -> float:
    r = params.rayleigh
    with np.load(problem) as data:
        runs = rayleigh_runs(data["A"], data["x0"], r.budget_per_dim * n, r.eta0, r.nu, r.baselines,
                             derive_seed(params.seed, "rayleigh-run", n, k), r.theory_eps)
        save_runs(out, runs, f_star=float(data["f_star"]), n=n)
    return float(sum(run["wall_time_s"] for run in runs.values()))


@stage_task
def solve_karcher(problem: Path, out: Path, params: Params, budget: int, k: int, rrdngd_phases: int) -> float:
    c = params.karcher
    with np.load(problem) as data:
        runs = karcher_runs(data["S"], budget, c.eta0, c.eta_offset, c.nu, c.baselines,
                            derive_seed(params.seed, "karcher-run", data["S"].shape[-1], k), c.trace_every,
                            data["X_ref"], rrdngd_phases)
        save_runs(out, runs, f_ref=float(data["f_ref"]))
    return float(sum(run["wall_time_s"] for run in runs.values()))


@stage_task
def solve_simplex(problem: Path, out: Path, params: Params, k: int) -> float:
    s = params.simplex
    with np.load(problem) as data:
        c, c_boundary, f_boundary = data["c"], data["c_boundary"], float(data["f_star_boundary"])
    x0 = np.zeros(s.n)
    x0[derive_seed(params.seed, "simplex-start", k) % s.n] = 1.0  # a random vertex
    # both targets from the same vertex with the same direction stream: a paired interior/boundary comparison
    seed = derive_seed(params.seed, "simplex-run", k)
    runs = {"rdfw": simplex_run(c, x0, max(s.horizons), s.L, s.D, seed),
            "rdfw_boundary": simplex_run(c_boundary, x0, max(s.horizons), s.L, s.D, seed, f_star=f_boundary)}
    save_runs(out, runs)
    return float(sum(run["wall_time_s"] for run in runs.values()))


@flow(name="riemannian_dueling-solve", task_runner=task_runner("process"))
def solve(params: Params, context: StageContext) -> StageReport:
    problems, folder = context.data("problems"), context.out("runs")
    folder.mkdir(parents=True)
    futures = {}
    # the longest runs first, so two workers finish together
    for case in sorted(params.karcher.cases,
                       key=lambda c: -(c.budget + c.rrdngd_phases * rrdngd_phase_length(c.n * (c.n + 1) // 2)) * c.n):
        for k in range(params.karcher.seeds):
            futures[f"karcher_n{case.n}_s{k}"] = solve_karcher.submit(
                problems / f"spd_n{case.n}.npz", folder / f"karcher_n{case.n}_s{k}.npz", params, case.budget, k,
                case.rrdngd_phases)
    for n in sorted(params.rayleigh.dims, reverse=True):
        for k in range(params.rayleigh.seeds):
            futures[f"rayleigh_n{n}_s{k}"] = solve_rayleigh.submit(
                problems / f"rayleigh_n{n}_s{k}.npz", folder / f"rayleigh_n{n}_s{k}.npz", params, n, k)
    for k in range(params.simplex.seeds):
        futures[f"simplex_s{k}"] = solve_simplex.submit(problems / "simplex.npz", folder / f"simplex_s{k}.npz",
                                                        params, k)
    walls = {name: f.result() for name, f in futures.items()}
    return StageReport(metrics={"runs": len(walls), "method_wall_time_s": float(sum(walls.values()))})


# ---------------------------------------------------------------- evaluate

def summarise(params: Params, runs_folder: Path) -> tuple[dict, dict, dict, dict]:
    """(rayleigh: n -> method -> field -> per seed, karcher: n -> ..., simplex: the E3 record, B: n -> method -> B)."""
    r = params.rayleigh
    rayleigh = {}
    for n in r.dims:
        per_seed = []
        for k in range(r.seeds):
            runs, meta = load_runs(runs_folder / f"rayleigh_n{n}_s{k}.npz")
            per_seed.append(summaries.rayleigh_seed(runs, meta["f_star"], n, r.claim_per_dim, r.target))
        rayleigh[n] = summaries.gather(per_seed)
    karcher = {}
    for case in params.karcher.cases:
        loaded = [_karcher_runs(runs_folder, case.n, k) for k in range(params.karcher.seeds)]
        karcher[case.n] = summaries.gather([summaries.karcher_seed(*pair) for pair in loaded])
        if case.rrdngd_phases:
            karcher[case.n]["rrdngd_phases"] = summaries.rrdngd_phases(loaded)
    s = params.simplex
    runs = [load_runs(runs_folder / f"simplex_s{k}.npz")[0] for k in range(s.seeds)]
    simplex = _simplex_record([run["rdfw"] for run in runs], s.horizons)
    simplex["boundary"] = _simplex_record([run["rdfw_boundary"] for run in runs], s.horizons)
    B = {n: {m: median_of(cell["hit"]) for m, cell in rayleigh[n].items() if m != "rgd"} for n in r.dims}
    return rayleigh, karcher, simplex, B


def _simplex_record(traces: list[dict], horizons: list[int]) -> dict:
    """E3 over seeds for one target: sub-optimality after each horizon, projections, LMO calls, feasibility."""
    return {"horizons": sorted(horizons),
            "subopt": {T: [float(t["subopt"][T]) for t in traces] for T in horizons},  # row T: after T iterations
            "projections": int(sum(t["projections"] for t in traces)),
            "lmo_calls": int(sum(t["lmo_calls"] for t in traces)),
            "max_sum_error": float(max(t["sum_error"].max() for t in traces)),
            "min_x": float(min(t["min_x"].min() for t in traces)),
            "comparisons": {T: int(traces[0]["queries"][T]) for T in horizons}}


def _karcher_runs(folder: Path, n: int, k: int) -> tuple[dict, float]:
    runs, meta = load_runs(folder / f"karcher_n{n}_s{k}.npz")
    return runs, meta["f_ref"]


@flow(name="riemannian_dueling-evaluate", task_runner=task_runner())
def evaluate(params: Params, context: StageContext) -> StageReport:
    runs_folder = context.data("runs")
    rayleigh, karcher, simplex, B = summarise(params, runs_folder)
    claims = paper_claims(rayleigh, karcher, simplex, params.decide_claims)
    rows = [{"experiment": "E1 rayleigh", "size": n, "method": m, "median_gap_at_40n": median_of(cell["gap_at_claim"]),
             "median_final_gap": median_of(cell["gap_at_budget"]), "median_B": median_of(cell["hit"]),
             "median_wall_time_s": median_of(cell["wall_time_s"])} for n, cells in rayleigh.items() for m, cell in cells.items()]
    rows += [{"experiment": "E2 karcher", "size": n, "method": m, "median_final_gap": median_of(cell["rel_gap"]),
              "min_eigenvalue": min(cell["min_eig"]), "median_wall_time_s": median_of(cell["wall_time_s"])}
             for n, cells in karcher.items() for m, cell in cells.items() if m != "rrdngd_phases"]
    rows += [{"experiment": f"E3 simplex {where}", "size": T, "method": "rdfw",
              "median_final_gap": median_of(record["subopt"][T])}
             for where, record in (("interior", simplex), ("boundary", simplex["boundary"])) for T in record["horizons"]]
    write_csv(context.out("summary.csv"), rows)
    folder = context.out("plots")
    n_shown = 50 if 50 in params.rayleigh.dims else max(params.rayleigh.dims)
    runs, meta = load_runs(runs_folder / f"rayleigh_n{n_shown}_s0.npz")
    plots.gap_traces(runs, meta["f_star"], f"E1 Rayleigh n = {n_shown} (seed 0): relative gap",
                     folder / "e1_rayleigh_gap.png")
    plots.hitting_counts(B, folder / "e1_comparisons_to_target.png")
    n_karcher = params.karcher.cases[0].n
    plots.gap_traces(*_karcher_runs(runs_folder, n_karcher, 0), f"E2 Karcher mean n = {n_karcher} (seed 0): "
                     "(f - f_ref) / f_ref", folder / "e2_karcher_gap.png", relative_to_f0=False)
    plots.horizon_rate(simplex["horizons"], {where: [median_of(record["subopt"][T]) for T in record["horizons"]]
                                             for where, record in (("interior optimum", simplex),
                                                                   ("boundary optimum", simplex["boundary"]))},
                       folder / "e3_rdfw_rate.png")
    metrics = {f"rayleigh.n{n}.{m}.median_gap_at_40n": median_of(cell["gap_at_claim"])
               for n, cells in rayleigh.items() for m, cell in cells.items()}
    metrics |= {f"rayleigh.n{n}.{m}.B": v for n, row in B.items() for m, v in row.items() if np.isfinite(v)}
    metrics |= {f"karcher.n{n}.{m}.median_rel_gap": median_of(cell["rel_gap"])
                for n, cells in karcher.items() for m, cell in cells.items() if m != "rrdngd_phases"}
    metrics |= {f"simplex.T{T}.median_subopt": median_of(simplex["subopt"][T]) for T in simplex["horizons"]}
    metrics |= {f"simplex.boundary.T{T}.median_subopt": median_of(simplex["boundary"]["subopt"][T])
                for T in simplex["horizons"]}
    return StageReport(metrics={k: v for k, v in metrics.items() if v is not None},
                       claims=claims)


STAGES = {"generate": generate, "solve": solve, "evaluate": evaluate}
