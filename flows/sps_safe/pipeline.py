"""SPS_safe: safeguarded stochastic Polyak step sizes for non-smooth optimization (ICML 2026).

Stages: generate (P1 interpolated and P2 noisy hinge SVMs per seed with exact f* by LP, P3 digits split),
solve (every convex method of the grids per (problem, seed), vectorised over methods, on worker processes; then
C1's tuned grids widened at an edge by the shared rule, calibration.py, each added point its own sweep per seed),
train (the digits MLP per (optimizer, seed), on worker processes), evaluate (summaries over seeds, claims
C1-C3, P3 diagnostics, plots).
"""
from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import numpy as np
from prefect import flow

from flows.runtime import task_runner
from flows.stage_task import stage_task
from tasks.core.device import single_torch_thread
from tasks.core.io import write_csv, write_json
from tasks.core.seeding import derive_seed
from tasks.core.stage import StageContext, StageReport
from flows.sps_safe.sweep import HingeSVM, Method, run_sweep
from tasks.train.digits import DigitsSplit, digits_split
from tasks.train.synthetic import hinge_losses, svm_interpolated, svm_noisy

from . import calibration, plots, summaries
from .claims import claims as paper_claims
from .experiments import run_label, train_digits
from .params import P1, P2, TUNED, DigitsOptimizerParams, Params, SvmGrid

PROBLEMS = {P1: svm_interpolated, P2: svm_noisy}
MAX_CURVE_POINTS = 200


def grid(params: Params, problem: str) -> SvmGrid:
    return getattr(params, problem)


def tuned_method(g: SvmGrid, rule: str, value: float) -> Method:
    """A run of a grid that C1 tunes (sgd: gamma; sps_max: gamma_b, with the problem's c)."""
    return Method(rule=rule, param=value, c=g.sps_max_c) if rule == "sps_max" else Method(rule=rule, param=value)


def methods(g: SvmGrid) -> list[Method]:
    return ([tuned_method(g, "sgd", v) for v in g.sgd] + [tuned_method(g, "sps_max", v) for v in g.sps_max]
            + ([Method(rule="sps_plus")] if g.sps_plus else []) + [Method(rule="sps_safe", param=v) for v in g.sps_safe]
            + [Method(rule="ima", param=v, lam=g.ima_lam) for v in g.ima]
            + [Method(rule="ima_sps_safe", param=v, lam=g.ima_lam) for v in g.ima_sps_safe])


def instances(params: Params) -> list[tuple[str, int]]:
    return [(problem, k) for problem in PROBLEMS for k in range(grid(params, problem).seeds)]


def load_npz(path: Path) -> dict:
    """Arrays as saved; 0-d entries as python scalars, the JSON entries (methods, labels) decoded."""
    with np.load(path) as data:
        loaded = {key: data[key].item() if data[key].ndim == 0 else data[key] for key in data.files}
    for key in ("methods", "labels"):
        if key in loaded:
            loaded[key] = json.loads(loaded[key])
    return loaded


def subsample(values: np.ndarray) -> list:
    """(step, value) pairs, at most MAX_CURVE_POINTS of them, for StageReport.curves."""
    steps = np.unique(np.linspace(0, len(values) - 1, min(len(values), MAX_CURVE_POINTS)).astype(int))
    return [(int(s), float(values[s])) for s in steps]


# ---------------------------------------------------------------- generate

@stage_task
def make_problem(folder: Path, problem: str, k: int, seed: int) -> dict:
    data = PROBLEMS[problem](seed)
    np.savez(folder / f"{problem}_{k}.npz", **data, instance_seed=seed)
    n, d = data["A"].shape
    return {"problem": problem, "k": k, "f_star": data["f_star"], "n": n, "d": d, "lp_status": data["lp_status"],
            "separable": bool(data["f_star"] < 1e-9)}


@flow(name="sps_safe-generate", task_runner=task_runner())
def generate(params: Params, context: StageContext) -> StageReport:
    folder = context.out("problems")
    folder.mkdir(parents=True)
    futures = [make_problem.submit(folder, problem, k, derive_seed(params.seed, problem, k))
               for problem, k in instances(params)]
    rows = [f.result() for f in futures]
    d = params.digits
    split = digits_split(d.split_seed, d.test_fraction, scaling="standard")
    np.savez(folder / "digits.npz", **{key: value.numpy() for key, value in asdict(split).items()})
    metrics = {f"{r['problem']}.{r['k']}.f_star": r["f_star"] for r in rows}
    for problem in PROBLEMS:
        mine = [r for r in rows if r["problem"] == problem]
        metrics |= {f"{problem}.n": mine[0]["n"], f"{problem}.d": mine[0]["d"],
                    f"{problem}.separable_fraction": float(np.mean([r["separable"] for r in mine]))}
    return StageReport(metrics=metrics | {"digits.n_train": len(split.y_train), "digits.n_test": len(split.y_test)})


# ---------------------------------------------------------------- solve

@stage_task
def solve_problem(problem_path: Path, out_path: Path, g: SvmGrid, sampling_seed: int,
                  sweep: list[Method] | None = None) -> dict:
    """One sweep on one instance: every method of the grid `g`, or only those of `sweep`."""
    data = load_npz(problem_path)
    sweep = methods(g) if sweep is None else sweep
    out_path.parent.mkdir(parents=True, exist_ok=True)
    result = run_sweep(HingeSVM(data["A"], data["b"]), sweep, x0=data["x0"], f_star=float(data["f_star"]),
                       epochs=g.epochs, batch=g.batch, seed=sampling_seed, trace_points=g.trace_points,
                       losses_at_optimum=hinge_losses(data["A"], data["b"], data["x_star"]))
    fields = asdict(result) | {"labels": json.dumps(result.labels), "methods": json.dumps([m.model_dump() for m in sweep])}
    np.savez(out_path, **fields, f_star=data["f_star"], sampling_seed=sampling_seed)
    return {"wall_time_s": result.wall_time_s, "final": result.rel_subopt[:, -1].tolist()}


def widen_grids(problems: Path, folder: Path, problem: str, g: SvmGrid, seeds: dict[int, int],
                finals: dict[int, list[float]]) -> tuple[dict, dict[str, float], int]:
    """C1's tuned grids of `problem` (TUNED) widened at an edge (calibration.py): the initial points' losses from
    the main sweeps' `finals` (seed -> each method's final value), each added point one sweep per seed in
    runs/widened/. Returns the record for calibration.json, the metrics and the number of added sweeps."""
    rows = {(m.rule, m.param): r for r, m in enumerate(methods(g)) if m.rule in TUNED[problem]}
    known = {point: calibration.grid_loss([finals[k][r] for k in range(g.seeds)]) for point, r in rows.items()}
    labels = {point: tuned_method(g, *point).label for point in rows}
    added = 0

    def run_points(points: list[tuple[str, float]]) -> list[float]:
        nonlocal added
        futures = []
        for point in points:
            method = tuned_method(g, *point)
            labels[point] = method.label
            futures.append([solve_problem.submit(problems / f"{problem}_{k}.npz",
                                                 folder / calibration.WIDENED / f"{problem}_{k}_{method.label}.npz",
                                                 g, seeds[k], [method]) for k in range(g.seeds)])
        added += len(points) * g.seeds
        return [calibration.grid_loss([f.result()["final"][0] for f in per_seed]) for per_seed in futures]

    results = calibration.widen({rule: getattr(g, rule) for rule in TUNED[problem]}, known, run_points)
    return calibration.record(results, labels, g.seeds), calibration.metrics(results, problem), added


@flow(name="sps_safe-solve", task_runner=task_runner("process"))
def solve(params: Params, context: StageContext) -> StageReport:
    problems, folder = context.data("problems"), context.out("runs")
    folder.mkdir(parents=True)
    seeds = {(problem, k): derive_seed(params.seed, problem, k, "indices") for problem, k in instances(params)}
    futures = {(problem, k): solve_problem.submit(problems / f"{problem}_{k}.npz", folder / f"{problem}_{k}.npz",
                                                  grid(params, problem), seed)
               for (problem, k), seed in seeds.items()}
    done = {key: f.result() for key, f in futures.items()}
    records, metrics, added = {}, {}, 0
    for problem in TUNED:
        g = grid(params, problem)
        records[problem], problem_metrics, problem_added = widen_grids(
            problems, folder, problem, g, {k: seeds[problem, k] for k in range(g.seeds)},
            {k: done[problem, k]["final"] for k in range(g.seeds)})
        metrics, added = metrics | problem_metrics, added + problem_added
    write_json(folder / calibration.CALIBRATION_FILE, records)
    return StageReport(metrics={"runs": sum(len(methods(grid(params, p))) for p, _ in instances(params)),
                                "sweep_wall_time_s": float(np.sum([r["wall_time_s"] for r in done.values()])),
                                "widened_runs": float(added)} | metrics)


# ---------------------------------------------------------------- train

@stage_task
def train_run(split_path: Path, out_path: Path, spec: dict, epochs: int, batch: int, seed: int, device: str) -> dict:
    single_torch_thread()
    import torch

    with np.load(split_path) as data:
        split = DigitsSplit(**{key: torch.from_numpy(data[key]) for key in data.files})
    result = train_digits(split, DigitsOptimizerParams(**spec), epochs=epochs, batch=batch, seed=seed, device=device)
    np.savez(out_path, **result)
    return {"label": result["label"], "accuracy": float(result["test_accuracy"][-1]), "wall_time_s": result["wall_time_s"]}


@flow(name="sps_safe-train", task_runner=task_runner("process"))
def train(params: Params, context: StageContext) -> StageReport:
    split_path, folder = context.data("problems", "digits.npz"), context.out("digits")
    folder.mkdir(parents=True)
    d = params.digits
    futures = []
    for spec in d.optimizers:
        label = run_label(spec)
        for k in range(d.seeds):
            futures.append(train_run.submit(split_path, folder / f"{label}_{k}.npz", spec.model_dump(), d.epochs, d.batch,
                                            derive_seed(params.seed, "digits", k), context.device))
    rows = [f.result() for f in futures]
    labels = dict.fromkeys(r["label"] for r in rows)
    return StageReport(metrics={f"{label}.test_accuracy": float(np.mean([r["accuracy"] for r in rows if r["label"] == label]))
                                for label in labels}
                       | {"train_wall_time_s": float(sum(r["wall_time_s"] for r in rows))})


# ---------------------------------------------------------------- evaluate

@flow(name="sps_safe-evaluate", task_runner=task_runner())
def evaluate(params: Params, context: StageContext) -> StageReport:
    runs_folder, digits_folder = context.data("runs"), context.data("digits")
    records = json.loads((runs_folder / calibration.CALIBRATION_FILE).read_text())
    runs = {problem: [calibration.merge_runs(load_npz(runs_folder / f"{problem}_{k}.npz"),
                                             [load_npz(runs_folder / calibration.WIDENED / f"{problem}_{k}_{label}.npz")
                                              for label in calibration.added_labels(records.get(problem))]) | {"seed": k}
                      for k in range(grid(params, problem).seeds)]
            for problem in PROBLEMS}
    problems = {problem: summaries.summarize_problem(problem_runs) for problem, problem_runs in runs.items()}
    digit_runs = [load_npz(path) for path in sorted(digits_folder.glob("*.npz"))]
    digits = summaries.summarize_digits(digit_runs)
    claims = paper_claims(problems[P1], problems[P2], decide=params.decide_claims,
                          p1_f_x0=summaries.initial_values(runs[P1]), p1_calibration=records[P1])
    metrics = summaries.metrics(problems, digits)
    write_csv(context.out("summary.csv"),
              [{"problem": problem, "label": label, **{k: v for k, v in row.items() if not isinstance(v, np.ndarray)}}
               for problem, summary in problems.items() for label, row in summary.items()]
              + [{"problem": "digits", "label": label, **{k: v for k, v in row.items() if not isinstance(v, np.ndarray)}}
                 for label, row in digits.items()])
    folder = context.out("plots")
    for problem, summary in problems.items():
        plots.rel_subopt(summary, problem, folder / f"{problem}_rel_subopt.png")
        plots.traces(runs[problem][0], "step_sizes", problem, "step size", folder / f"{problem}_step_sizes.png")
        plots.traces(runs[problem][0], "grad_norms", problem, "||g||", folder / f"{problem}_grad_norms.png")
    plots.digits_accuracy(digits, folder / "digits_accuracy.png")
    plots.digits_traces(digit_runs, folder / "digits_traces.png")
    curves = {f"{problem}.{label}.rel_subopt": subsample(row["mean"])
              for problem, summary in problems.items() for label, row in summary.items()}
    curves |= {f"digits.{label}.test_accuracy": subsample(row["accuracy_mean"]) for label, row in digits.items()}
    return StageReport(metrics=metrics, curves=curves, claims=claims)


STAGES = {"generate": generate, "solve": solve, "train": train, "evaluate": evaluate}
