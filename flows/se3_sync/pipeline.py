"""SE(3) synchronization (Dual Quaternion SE(3) Synchronization with Recovery Guarantees).

Stages: generate (instances of the three data families and the timing graphs), solve (every
method on every instance as mapped Prefect tasks; then the timing runs, one at a time so that
they are not disturbed by each other), evaluate (errors, claims C1-C3, plots).
"""
from __future__ import annotations

import json
from itertools import product
from pathlib import Path

import numpy as np
from prefect import flow

from flows.runtime import task_runner
from flows.stage_task import stage_task
from tasks.core.io import write_csv, write_json
from tasks.core.seeding import derive_seed
from tasks.core.stage import StageContext, StageReport
from tasks.sync import generators, scans
from tasks.sync.methods import METHODS
from tasks.sync.store import Instance, load_instance, save_instance, save_result
from tasks.sync.timing import time_methods

from . import plots
from .claims import accuracy_claim, efficiency_claim, not_converged, registration_claim
from .errors import error_curve, error_rows, wide_curve
from .params import Params, Solver


# ---------------------------------------------------------------- generate

@stage_task(retries=2, retry_delay_seconds=1)
def make_geometric(folder: Path, name: str, n: int, p: float, sigma: float, seed: int, meta: dict) -> str:
    graph, truth = generators.geometric(n, p, sigma, sigma, seed)
    save_instance(folder / f"{name}.npz", Instance(graph, truth, {**meta, "n": n, "p": p, "sigma": sigma}))
    return name


@stage_task(retries=2, retry_delay_seconds=1)
def make_chain(folder: Path, name: str, n: int, loop_fraction: float, sigma: float, seed: int, meta: dict) -> str:
    graph, truth = generators.slam_chain(n, loop_fraction, sigma, sigma, seed)
    save_instance(folder / f"{name}.npz", Instance(graph, truth, {**meta, "n": n, "loop_fraction": loop_fraction,
                                                                   "sigma": sigma}))
    return name


@stage_task(retries=2, retry_delay_seconds=1)
def make_additive(folder: Path, name: str, n: int, p: float, sigma: float, seed: int, meta: dict) -> str:
    graph, truth = generators.additive(n, p, sigma, seed)
    save_instance(folder / f"{name}.npz", Instance(graph, truth, {**meta, "n": n, "p": p, "sigma": sigma}))
    return name


@stage_task(retries=2, retry_delay_seconds=1)
def make_scans(folder: Path, name: str, n_scans: int, n_pts: int, seed: int, meta: dict) -> dict:
    data = scans.make_scans(n_scans, n_pts, seed)
    points = np.concatenate(data.points)
    offsets = np.cumsum([0] + [len(p) for p in data.points])
    save_instance(folder / f"{name}.npz", Instance(data.graph, data.truth, {**meta, "n": n_scans, "n_pts": n_pts}),
                  icp_rmse=data.icp_rmse, points=points, point_offsets=offsets)  # no timings: same seed, same bytes
    return {"edges": len(data.graph.edges), "icp_rmse": float(np.median(data.icp_rmse)), "icp_time": data.icp_time}


@flow(name="se3_sync-generate", task_runner=task_runner())
def generate(params: Params, context: StageContext) -> StageReport:
    accuracy, timing = context.out("instances"), context.out("timing_instances")
    accuracy.mkdir(parents=True)
    timing.mkdir(parents=True)
    futures = []
    for sigma, k in product(params.noise_levels, range(params.seeds)):
        seed = derive_seed(params.seed, "geometric", sigma, k)
        meta = {"family": "geometric", "seed": seed, "trial": k}
        futures.append(make_geometric.submit(accuracy, f"geometric_s{sigma:g}_t{k}", params.n, params.p, sigma, seed, meta))
    additive = params.additive
    for sigma, k in product(additive.noise_levels, range(additive.seeds)):
        seed = derive_seed(params.seed, "additive", sigma, k)
        meta = {"family": "additive", "seed": seed, "trial": k}
        futures.append(make_additive.submit(accuracy, f"additive_s{sigma:g}_t{k}", additive.n, additive.p, sigma, seed, meta))
    scan_futures = []
    for k in range(params.scans.seeds):
        seed = derive_seed(params.seed, "scans", k)
        meta = {"family": "scans", "seed": seed, "trial": k, "sigma": 0.0}
        scan_futures.append(make_scans.submit(accuracy, f"scans_t{k}", params.scans.n_scans, params.scans.n_pts, seed, meta))
    t = params.timing
    cells = [(n, p, "claim", f"n{n}_p{p:g}") for n, p in product(t.claim_sizes, t.claim_p)]
    cells += [(n, min(1.0, t.mean_degree / (n - 1)), "curve", f"n{n}") for n in t.sizes]
    for (n, p, purpose, cell), k in product(cells, range(t.seeds)):
        seed = derive_seed(params.seed, "timing", n, p, k)
        meta = {"family": "timing", "graph": "er", "purpose": purpose, "seed": seed, "trial": k}
        futures.append(make_geometric.submit(timing, f"timing_{purpose}_{cell}_t{k}", n, p, t.noise, seed, meta))
    for n, k in product(t.chain_sizes, range(t.seeds)):
        seed = derive_seed(params.seed, "timing_chain", n, k)
        meta = {"family": "timing", "graph": "chain", "purpose": "curve", "seed": seed, "trial": k}
        futures.append(make_chain.submit(timing, f"timing_chain_n{n}_t{k}", n, t.loop_fraction, t.noise, seed, meta))
    names = [f.result() for f in futures]
    scan_stats = [f.result() for f in scan_futures]
    return StageReport(metrics={
        "instances": len(names) + len(scan_stats),
        "scans_icp_rmse_median": float(np.median([s["icp_rmse"] for s in scan_stats])),
        "scans_icp_time_s": float(sum(s["icp_time"] for s in scan_stats)),
        "scans_edges": float(np.mean([s["edges"] for s in scan_stats])),
    })


# ---------------------------------------------------------------- solve

def _solver_options(method: str, solver: Solver) -> dict:
    if method == "dqgpm":
        return {"rot_tol": solver.rot_tol, "trans_tol": solver.trans_tol, "max_iter": solver.max_iter,
                "power_tol": solver.power_tol, "power_max_iter": solver.power_max_iter, "shift": solver.shift,
                "engine": solver.engine}
    if method == "dq_spectral":
        return {"rot_tol": solver.rot_tol, "trans_tol": solver.trans_tol, "max_iter": solver.power_max_iter,
                "engine": solver.engine}
    return {}


def timing_variants(solver: Solver, eig_matched_tol: float) -> dict[str, dict[str, tuple[str, dict]]]:
    """graph family -> label -> (method, options) of the timing runs: DQGPM as solved, EIG at ARPACK's stock tol and
    at the matched tol. On chains DQGPM starts from the spanning-tree solution (the power method needs hundreds of
    iterations there, up to its max_iter); the spectral start is timed beside it, reported only."""
    dqgpm = _solver_options("dqgpm", solver)
    eigs = {"eig": ("eig", {}), "eig_matched": ("eig", {"tol": eig_matched_tol})}
    return {"er": {"dqgpm": ("dqgpm", dqgpm), **eigs},
            "chain": {"dqgpm": ("dqgpm", {**dqgpm, "init": "tree"}), "dqgpm_spectral_start": ("dqgpm", dqgpm), **eigs}}


@stage_task
def run_method(instance_path: Path, method: str, options: dict, out_folder: Path) -> dict:
    instance = load_instance(instance_path)
    if method == "dqgpm":  # the error trace is for logging only; it does not steer the method
        options = {**options, "truth": instance.truth}
    result = METHODS[method](instance.graph, **options)
    save_result(out_folder / f"{method}__{instance_path.stem}.npz", result)
    return {"instance": instance_path.stem, "method": method, "iterations": result.iterations,
            "converged": result.converged, "message": result.message,
            "wall_time": result.wall_time, "history": result.history,
            "error_history": result.info.get("error_history", [])}


@stage_task
def time_runs(paths: list[Path], variants: dict, repeats: int) -> list[dict]:
    """Every timing instance (claim grid, then curves) with BLAS on 1 thread, the methods alternated."""
    claim = [p for p in paths if "_claim_" in p.stem]
    return time_methods(claim + [p for p in paths if p not in claim], variants, repeats, (1,))


@flow(name="se3_sync-solve", task_runner=task_runner())
def solve(params: Params, context: StageContext) -> StageReport:
    runs = context.out("runs")
    runs.mkdir(parents=True)
    instances = sorted(context.data("instances").glob("*.npz"))
    pairs = list(product(instances, params.methods))
    futures = run_method.map([p for p, _ in pairs], [m for _, m in pairs],
                             [_solver_options(m, params.solver) for _, m in pairs], runs)
    summaries = [f.result() for f in futures]
    timing_paths = sorted(context.data("timing_instances").glob("*.npz"))
    variants = timing_variants(params.solver, params.timing.eig_matched_tol)
    timing = time_runs(timing_paths, variants, params.timing.repeats)
    write_json(context.out("timing.json"), timing)

    first = next(s for s in summaries if s["method"] == "dqgpm" and s["instance"].startswith("geometric"))
    contraction = next((s for s in summaries if s["method"] == "dqgpm" and s["instance"].startswith("additive")), first)
    dq = [s for s in summaries if s["method"] == "dqgpm"]
    iterative = [s for s in summaries if s["method"] in ("dqgpm", "dq_spectral")]
    timed_dq = [r for r in timing if r["method"].startswith("dqgpm") and r["blas_threads"] == 1]
    return StageReport(
        metrics={"runs": len(summaries), "dqgpm_iterations_median": float(np.median([s["iterations"] for s in dq])),
                 "not_converged_runs": sum(not s["converged"] for s in iterative),
                 "timing_dqgpm_not_converged": sum(not r["converged"] for r in timed_dq)},
        curves={f"dqgpm_change.{first['instance']}": first["history"],
                f"dqgpm_rot_error_deg.{contraction['instance']}": contraction["error_history"]},
    )


# ---------------------------------------------------------------- evaluate

@flow(name="se3_sync-evaluate", task_runner=task_runner())
def evaluate(params: Params, context: StageContext) -> StageReport:
    instances = sorted(context.data("instances").glob("*.npz"))
    runs = context.data("runs")
    rows = error_rows(instances, runs, params.methods)
    timing = json.loads(context.data("timing.json").read_text())
    t, decide, limit = params.timing, params.decide_claims, params.claim_ratio
    claims = [
        accuracy_claim(rows, limit, params.seed, decide, f"geometric, n={params.n}, p={params.p}, {params.seeds} trials"),
        efficiency_claim(timing, decide, f"geometric, n in {t.claim_sizes} x p in {t.claim_p}, sigma={t.noise}, "
                                         f"BLAS on 1 thread, {t.seeds} graphs x {t.repeats} alternated rounds per cell"),
        registration_claim(rows, limit, params.seed, decide, f"{params.scans.n_scans} scans, {params.scans.seeds} trials"),
    ]
    write_csv(context.out("errors.csv"), rows)
    curve = error_curve(rows, ["geometric", "additive", "scans"], params.methods)
    write_csv(context.out("error_vs_noise.csv"), wide_curve(curve, "geometric"))
    folder = context.out("plots")
    plots.plot_error_vs_noise(rows, "geometric", params.methods, folder / "error_vs_noise_geometric.png")
    plots.plot_error_vs_noise(rows, "additive", params.methods, folder / "error_vs_noise_additive.png")
    plots.plot_time_vs_n(timing, folder / "time_vs_n.png")
    plots.plot_convergence(runs, instances, folder / "dqgpm_convergence.png")

    claim_numbers = {f"{c.id}.ours": c.ours for c in claims} | {f"{c.id}.passed": float(c.passed) for c in claims if c.passed is not None}
    claim_numbers |= {f"{c.id}.dqgpm_not_converged": not_converged(c.details) for c in claims}
    claim_numbers["runs_not_converged"] = sum(not r["converged"] for r in rows if r["method"] in ("dqgpm", "dq_spectral"))
    claim_numbers |= {f"timing.{r['family']}.n{r['n']}.{key}": r[key] for r in claims[1].details["curve"]
                      for key in ("ratio_dqgpm_over_eig", "ratio_dqgpm_spectral_start_over_eig", "dqgpm_not_converged")
                      if key in r}
    claim_numbers |= {f"C2.cell.n{c['n']}_p{c['p']:g}.ratio_median": c["ratio_median"] for c in claims[1].details["cells"]}
    errors = {}
    for row in curve:
        prefix = f"{row['family']}.{row['method']}.sigma_{row['sigma']:g}"
        errors |= {f"{prefix}.rot_median_deg": row["rot_median"], f"{prefix}.trans_median": row["trans_median"]}
    headline = {"runs_not_converged": claim_numbers["runs_not_converged"]}
    metrics = claim_numbers | errors
    return StageReport(metrics=metrics, claims=claims, headline=headline)


STAGES = {"generate": generate, "solve": solve, "evaluate": evaluate}
