"""DDSVM: deep features trained for an explicit SVM margin where data is scarce (ICML 2026, abstract only).

Stages: generate (paired data-scarce splits of the digits, k images per class per seed), train (every method of
every sweep on each split, on worker processes; models as safetensors), evaluate (test errors of both read-outs,
training-feature margins, claims C1-C5, plots).
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
from tasks.train.few_shot import digit_images, per_class_split

from . import plots
from .claims import by_seed, claims as paper_claims
from .experiments import evaluate_run, images, run_label, train_run
from .params import CE, DDSVM, MethodParams, Params, Training


def split_name(k: int, seed_index: int) -> str:
    return f"split_k{k}_s{seed_index}.npz"


def runs(params: Params) -> list[tuple[str, int, int]]:
    """(method, k, seed index) of every run, sweep by sweep."""
    return [(method, sweep.k, s) for sweep in params.sweeps for s in range(sweep.seeds) for method in sweep.methods]


# ---------------------------------------------------------------- generate

@flow(name="ddsvm-generate", task_runner=task_runner())
def generate(params: Params, context: StageContext) -> StageReport:
    folder = context.out("splits")
    folder.mkdir(parents=True)
    _, labels = digit_images()
    metrics = {}
    for sweep in params.sweeps:
        for s in range(sweep.seeds):
            train, test = per_class_split(labels, sweep.k, derive_seed(params.seed, "split", sweep.k, s))
            np.savez(folder / split_name(sweep.k, s), train=train, test=test)
        counts = np.bincount(labels[train], minlength=10)
        metrics |= {f"k{sweep.k}.n_train": len(train), f"k{sweep.k}.n_test": len(test),
                    f"k{sweep.k}.train_per_class_min": int(counts.min()), f"k{sweep.k}.train_per_class_max": int(counts.max())}
    return StageReport(metrics=metrics)


# ---------------------------------------------------------------- train

@stage_task
def train_task(split_path: Path, folder: Path, label: str, method: MethodParams, training: Training, seed: int,
               device: str) -> dict:
    single_torch_thread()  # tiny CNNs: a second thread only adds synchronisation (spec §6)
    return train_run(split_path, folder, label, method, training, seed, device)


@flow(name="ddsvm-train", task_runner=task_runner("process"))
def train(params: Params, context: StageContext) -> StageReport:
    splits, folder = context.data("splits"), context.out("models")
    folder.mkdir(parents=True)
    futures = [train_task.submit(splits / split_name(k, s), folder, run_label(method, k, s), params.methods[method],
                                 params.training, derive_seed(params.seed, "train", k, s), context.device)
               for method, k, s in runs(params)]
    done = [f.result() for f in futures]
    return StageReport(metrics={"runs": len(done), "train_wall_time_s": float(sum(r["wall_time_s"] for r in done))})


# ---------------------------------------------------------------- evaluate

def run_metrics(rows: list[dict], params: Params) -> dict:
    metrics = {}
    for sweep in params.sweeps:
        for method in sweep.methods:
            for key in ("head_error", "svm_error", "margin_min", "margin_mean", "wall_time_s"):
                metrics[f"k{sweep.k}.{method}.{key}"] = float(by_seed(rows, method, sweep.k, key).mean())
    return metrics


@flow(name="ddsvm-evaluate", task_runner=task_runner())
def evaluate(params: Params, context: StageContext) -> StageReport:
    single_torch_thread()
    splits, models = context.data("splits"), context.data("models")
    x, y = images(params.training.upsample)
    rows = [{"method": method, "k": k, "seed": s,
             **evaluate_run(splits / split_name(k, s), models, run_label(method, k, s), x, y)}
            for method, k, s in runs(params)]
    ks = [sweep.k for sweep in params.sweeps]
    checked = paper_claims(rows, params.gate_k, ks, params.trend_ks, params.decide_claims, params.seed)
    gate = params.gate_k
    headline = {f"{m}.{r}": float(by_seed(rows, m, gate, f"{r}_error").mean())
                for m, r in ((CE, "head"), (CE, "svm"), (DDSVM, "svm"), (DDSVM, "head"))}
    headline |= {f"{m}.margin_mean": float(by_seed(rows, m, gate, "margin_mean").mean()) for m in (CE, DDSVM)}
    write_csv(context.out("results.csv"), [{k: v for k, v in r.items() if k != "log"} for r in rows])
    folder = context.out("plots")
    gate_methods = next(s.methods for s in params.sweeps if s.k == gate)
    plots.errors_by_method(rows, gate, gate_methods, folder / "errors_by_method.png")
    plots.errors_by_k(rows, sorted(ks), [CE, DDSVM], folder / "errors_by_k.png")
    plots.gains_by_k(rows, sorted(ks), folder / "gains_by_k.png")
    plots.margins_along_training(rows, gate, DDSVM, CE, folder / "margins.png")
    ddsvm_log = next(r["log"] for r in rows if r["method"] == DDSVM and r["k"] == gate and r["seed"] == 0)
    curves = {f"k{gate}.s0.ddsvm.{key}": [(row["epoch"], row[key]) for row in ddsvm_log if key in row]
              for key in ("loss", "ce", "push", "margin_min", "margin_mean", "svm_train_accuracy")}
    return StageReport(metrics=run_metrics(rows, params), curves=curves,
                       claims=checked, headline=headline)


STAGES = {"generate": generate, "train": train, "evaluate": evaluate}
