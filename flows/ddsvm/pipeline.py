"""DDSVM: deep features trained for an explicit SVM margin where data is scarce (ICML 2026, abstract only).

Stages: generate (the depth images of trimesh primitives where a sweep uses them; paired data-scarce splits of the
digits or of those images, k images per class per seed), train (every method of every sweep on each split, on worker
processes; models as safetensors), evaluate (test errors of both read-outs, training-feature margins, claims C1-C6,
plots).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from prefect import flow

from flows.runtime import task_runner
from flows.stage_task import stage_task
from tasks.core.device import single_torch_thread
from tasks.core.io import write_csv
from tasks.core.seeding import derive_seed
from tasks.core.stage import StageContext, StageReport
from tasks.train.depth_images import CLASSES
from tasks.train.few_shot import per_class_split

from . import plots
from .claims import by_seed, claims as paper_claims
from .experiments import SHAPES_FILE, evaluate_run, images, labels, make_shapes, run_label, train_run
from .params import CE, DDSVM, DIGITS, SHAPES, MethodParams, Params, Sweep, Training


def split_name(sweep: Sweep, seed_index: int) -> str:
    return f"split_{sweep.tag()}_s{seed_index}.npz"


def runs(params: Params) -> list[tuple[str, Sweep, int]]:
    """(method, sweep, seed index) of every run, sweep by sweep."""
    return [(method, sweep, s) for sweep in params.sweeps for s in range(sweep.seeds) for method in sweep.methods]


def run_seed(base: int, purpose: str, sweep: Sweep, seed_index: int) -> int:
    """The seed of a split or training ("split", "train"): the digits keep theirs from before the depth images came,
    the depth images' name their data source too."""
    keys = (sweep.k, seed_index) if sweep.data == DIGITS else (sweep.data, sweep.k, seed_index)
    return derive_seed(base, purpose, *keys)


# ---------------------------------------------------------------- generate

@flow(name="ddsvm-generate", task_runner=task_runner())
def generate(params: Params, context: StageContext) -> StageReport:
    folder = context.out("splits")
    folder.mkdir(parents=True)
    metrics = {}
    if any(sweep.data == SHAPES for sweep in params.sweeps):
        metrics["shapes.images"] = make_shapes(folder, params.shapes_per_class, derive_seed(params.seed, SHAPES))
    for sweep in params.sweeps:
        y = labels(sweep.data, folder)
        for s in range(sweep.seeds):
            train, test = per_class_split(y, sweep.k, run_seed(params.seed, "split", sweep, s))
            np.savez(folder / split_name(sweep, s), train=train, test=test)
        counts = np.bincount(y[train], minlength=10)
        tag = sweep.tag()
        metrics |= {f"{tag}.n_train": len(train), f"{tag}.n_test": len(test),
                    f"{tag}.train_per_class_min": int(counts.min()), f"{tag}.train_per_class_max": int(counts.max())}
    return StageReport(metrics=metrics)


# ---------------------------------------------------------------- train

@stage_task
def train_task(split_path: Path, folder: Path, label: str, method: MethodParams, training: Training, sweep: Sweep,
               seed: int, device: str) -> dict:
    single_torch_thread()  # tiny CNNs: a second thread only adds synchronisation (spec §6)
    return train_run(split_path, folder, label, method, training, sweep, seed, device)


@flow(name="ddsvm-train", task_runner=task_runner("process"))
def train(params: Params, context: StageContext) -> StageReport:
    splits, folder = context.data("splits"), context.out("models")
    folder.mkdir(parents=True)
    futures = [train_task.submit(splits / split_name(sweep, s), folder, run_label(method, sweep, s),
                                 params.methods[method], params.training, sweep,
                                 run_seed(params.seed, "train", sweep, s), context.device)
               for method, sweep, s in runs(params)]
    done = [f.result() for f in futures]
    return StageReport(metrics={"runs": len(done), "train_wall_time_s": float(sum(r["wall_time_s"] for r in done))})


# ---------------------------------------------------------------- evaluate

def run_metrics(rows: list[dict], params: Params) -> dict:
    metrics = {}
    for sweep in params.sweeps:
        mine = of_data(rows, sweep.data)
        for method in sweep.methods:
            for key in ("head_error", "svm_error", "margin_min", "margin_mean", "wall_time_s"):
                metrics[f"{sweep.tag()}.{method}.{key}"] = float(by_seed(mine, method, sweep.k, key).mean())
    return metrics


def of_data(rows: list[dict], data: str) -> list[dict]:
    return [r for r in rows if r["data"] == data]


def evaluate_rows(params: Params, splits: Path, models: Path) -> list[dict]:
    """One row per run: its method, data, k and seed index with evaluate_run's measures."""
    rows = []
    for data in dict.fromkeys(sweep.data for sweep in params.sweeps):
        x, y = images(data, splits, params.training.upsample)
        rows += [{"method": method, "data": data, "k": sweep.k, "seed": s,
                  **evaluate_run(splits / split_name(sweep, s), models, run_label(method, sweep, s), x, y)}
                 for method, sweep, s in runs(params) if sweep.data == data]
    return rows


def shapes_plots(rows: list[dict], params: Params, splits: Path, folder: Path) -> None:
    """C6's plots: errors per method and read-out, example images per class (none without its sweep)."""
    k = params.shapes_k
    if k is None:
        return
    methods = next(s.methods for s in params.sweeps if s.data == SHAPES and s.k == k)
    plots.errors_by_method(rows, k, methods, folder / "shapes_errors_by_method.png", "generated depth images, ")
    with np.load(splits / SHAPES_FILE) as saved:
        plots.depth_examples(saved["x"], saved["y"], CLASSES, folder / "shapes_examples.png")


@flow(name="ddsvm-evaluate", task_runner=task_runner())
def evaluate(params: Params, context: StageContext) -> StageReport:
    single_torch_thread()
    splits, models = context.data("splits"), context.data("models")
    rows = evaluate_rows(params, splits, models)
    ks = sorted(sweep.k for sweep in params.sweeps if sweep.data == DIGITS)
    checked = paper_claims(rows, params.gate_k, ks, params.trend_ks, params.shapes_k, params.decide_claims,
                           params.seed)
    digits = of_data(rows, DIGITS)
    gate = params.gate_k
    headline = {f"{m}.{r}": float(by_seed(digits, m, gate, f"{r}_error").mean())
                for m, r in ((CE, "head"), (CE, "svm"), (DDSVM, "svm"), (DDSVM, "head"))}
    headline |= {f"{m}.margin_mean": float(by_seed(digits, m, gate, "margin_mean").mean()) for m in (CE, DDSVM)}
    write_csv(context.out("results.csv"), [{k: v for k, v in r.items() if k != "log"} for r in rows])
    folder = context.out("plots")
    gate_methods = next(s.methods for s in params.sweeps if s.data == DIGITS and s.k == gate)
    plots.errors_by_method(digits, gate, gate_methods, folder / "errors_by_method.png")
    plots.errors_by_k(digits, ks, [CE, DDSVM], folder / "errors_by_k.png")
    plots.gains_by_k(digits, ks, folder / "gains_by_k.png")
    plots.margins_along_training(digits, gate, DDSVM, CE, folder / "margins.png")
    shapes_plots(of_data(rows, SHAPES), params, splits, folder)
    ddsvm_log = next(r["log"] for r in digits if r["method"] == DDSVM and r["k"] == gate and r["seed"] == 0)
    curves = {f"k{gate}.s0.ddsvm.{key}": [(row["epoch"], row[key]) for row in ddsvm_log if key in row]
              for key in ("loss", "ce", "push", "margin_min", "margin_mean", "svm_train_accuracy")}
    return StageReport(metrics=run_metrics(rows, params), curves=curves,
                       claims=checked, headline=headline)


STAGES = {"generate": generate, "train": train, "evaluate": evaluate}
