"""S-Adam: singularity-aware Adam, AdamW braked by a randomized probe of the local geometry (ICML 2026).

Stages: generate (digits splits per seed, clean and noisy training labels), train (every
(task, optimizer, seed) run on worker processes: digits QAT, digits with noisy labels and small
batches, nonsmooth Rosenbrock), evaluate (claims C1-C3, summaries, plots).
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import sklearn
import torch
from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from flows.runtime import task_runner
from tasks.core.claims import claims_document
from tasks.core.device import single_torch_thread
from tasks.core.io import write_csv, write_json
from tasks.core.seeding import derive_seed
from tasks.core.stage import StageContext, StageReport
from tasks.train.digits import QUANT_4BIT, QUANT_CIFAR100_2BIT, digits_split, noisy_labels

from . import plots
from .claims import claims as paper_claims
from .claims import largest_difference, medians, run_summary
from .params import OptimizerOptions, Params
from .runs import run_rosenbrock, train_digits

PAPER = "s_adam"
DATA = Path("data") / PAPER
QUANT = {"4bit": QUANT_4BIT, "cifar100_2bit": QUANT_CIFAR100_2BIT}
NOISY_TASK, ROSENBROCK_TASK = "digits-noisy-smallbatch", "ns-rosenbrock"
MAX_CURVE_POINTS = 200


def qat_task(variant: str) -> str:
    return f"digits-qat-{variant}"


def options_of(config: OptimizerOptions) -> dict:
    return config.model_dump(exclude={"kind"})


# ---------------------------------------------------------------- generate

@task(cache_policy=NO_CACHE)
def make_split(seed: int, test_fraction: float, label_noise: float) -> dict:
    split = digits_split(seed, test_fraction, scaling="pm1")
    noisy = noisy_labels(split.y_train, label_noise, 10, torch.Generator().manual_seed(derive_seed(seed, "label-noise")))
    return {"x_train": split.x_train.numpy(), "y_train": split.y_train.numpy(), "y_train_noisy": noisy.numpy(),
            "x_test": split.x_test.numpy(), "y_test": split.y_test.numpy(), "n_classes": 10}


@flow(name="s_adam-generate", task_runner=task_runner())
def generate(params: Params, context: StageContext) -> StageReport:
    folder = context.out(str(DATA / "splits"))
    folder.mkdir(parents=True, exist_ok=True)
    manifest = {"sklearn_version": sklearn.__version__, "test_fraction": params.test_fraction,
                "label_noise": params.noisy.label_noise, "scaling": "x / 16 mapped to [-1, 1]", "splits": {}}
    futures = {seed: make_split.submit(seed, params.test_fraction, params.noisy.label_noise) for seed in params.seeds}
    for seed, future in futures.items():
        arrays = future.result()
        np.savez(folder / f"digits_split_{seed}.npz", **arrays)
        manifest["splits"][seed] = {
            "file": f"digits_split_{seed}.npz", "n_train": len(arrays["y_train"]), "n_test": len(arrays["y_test"]),
            "train_class_counts": np.bincount(arrays["y_train"], minlength=10).tolist(),
            "test_class_counts": np.bincount(arrays["y_test"], minlength=10).tolist(),
            "noisy_class_counts": np.bincount(arrays["y_train_noisy"], minlength=10).tolist(),
            "labels_changed": int((arrays["y_train"] != arrays["y_train_noisy"]).sum())}
    write_json(context.out(str(DATA / "manifest.json")), manifest)
    return StageReport(metrics={"splits": len(params.seeds),
                                "noisy_fraction": float(np.mean([s["labels_changed"] / s["n_train"]
                                                                 for s in manifest["splits"].values()]))})


# ---------------------------------------------------------------- train

@task(cache_policy=NO_CACHE)
def digits_run(split_path: Path, task_name: str, labels: str, optimizer: str, kind: str, options: dict, seed: int,
               epochs: int, batch: int, hidden: tuple[int, ...], quant, device: str) -> dict:
    single_torch_thread()
    with np.load(split_path) as arrays:
        data = dict(arrays)
    run = train_digits(data, labels, kind=kind, options=options, seed=seed, epochs=epochs, batch=batch, hidden=hidden,
                       quant=quant, device=device)
    return {"task": task_name, "optimizer": optimizer, "seed": seed, "kind": kind, "options": options} | run


@task(cache_policy=NO_CACHE)
def rosenbrock_run(optimizer: str, kind: str, options: dict, seed: int, start: tuple[float, float], steps: int) -> dict:
    single_torch_thread()
    run = run_rosenbrock(kind=kind, options=options, seed=seed, start=start, steps=steps)
    return {"task": ROSENBROCK_TASK, "optimizer": optimizer, "seed": seed, "kind": kind, "options": options} | run


def write_run(folder: Path, run: dict) -> None:
    """runs/<task>/<optimizer>/<seed>/: metrics.json, epochs.csv or trajectory.npy, lgi_trace.csv."""
    folder = folder / run["task"] / run["optimizer"] / str(run["seed"])
    folder.mkdir(parents=True, exist_ok=True)
    write_json(folder / "metrics.json", {k: v for k, v in run.items() if k not in ("epochs", "lgi", "trajectory")})
    if "epochs" in run:
        write_csv(folder / "epochs.csv", run["epochs"])
    if "trajectory" in run:
        np.save(folder / "trajectory.npy", run["trajectory"])
    if run["lgi"]:
        write_csv(folder / "lgi_trace.csv", run["lgi"])


def subsample(values: list, limit: int = MAX_CURVE_POINTS) -> list:
    """(index, value) pairs of at most ~limit evenly spaced entries."""
    stride = max(1, -(-len(values) // limit))
    return [(i, values[i]) for i in range(0, len(values), stride)]


@flow(name="s_adam-train", task_runner=task_runner("process"))
def train(params: Params, context: StageContext) -> StageReport:
    splits = context.data(str(DATA / "splits"))
    hidden = tuple(params.hidden)
    jobs = []
    for seed in params.seeds:
        split = splits / f"digits_split_{seed}.npz"
        for name, config in params.optimizers.items():
            for variant in params.qat.variants:
                jobs.append(digits_run.submit(split, qat_task(variant), "y_train", name, config.kind, options_of(config),
                                              seed, params.qat.epochs, params.qat.batch, hidden, QUANT[variant],
                                              context.device))
            jobs.append(digits_run.submit(split, NOISY_TASK, "y_train_noisy", name, config.kind, options_of(config), seed,
                                          params.noisy.epochs, params.noisy.batch, hidden, None, context.device))
        for name, config in params.rosenbrock.optimizers.items():
            jobs.append(rosenbrock_run.submit(name, config.kind, options_of(config), seed, params.rosenbrock.start,
                                              params.rosenbrock.steps))
    runs = [job.result() for job in jobs]
    folder = context.out(str(DATA / "runs"))
    for run in runs:
        write_run(folder, run)
    curves = {}
    for run in runs:
        key = f"{run['task']}.{run['optimizer']}.seed{run['seed']}"
        if "epochs" in run:
            curves[f"{key}.test_accuracy"] = [(r["epoch"], r["test_accuracy"]) for r in run["epochs"]]
        if run["lgi"]:
            curves[f"{key}.damp"] = subsample([r["damp"] for r in run["lgi"]])
    table = medians([run_summary(run, params.volatility_epochs) for run in runs])
    return StageReport(metrics={"runs": len(runs)} | {f"{task_name}.{optimizer}.wall_time_s": row["wall_time_s"]
                                                      for (task_name, optimizer), row in table.items()},
                       curves=curves)


# ---------------------------------------------------------------- evaluate

def load_runs(folder: Path) -> list[dict]:
    """Every run written by train, with its per-epoch rows or trajectory."""
    runs = []
    for metrics in sorted(folder.glob("*/*/*/metrics.json")):
        run = json.loads(metrics.read_text())
        epochs = metrics.parent / "epochs.csv"
        if epochs.exists():
            with open(epochs) as handle:
                run["epochs"] = [{k: (float(v) if v != "" else None) for k, v in row.items()} for row in csv.DictReader(handle)]
        trajectory = metrics.parent / "trajectory.npy"
        if trajectory.exists():
            run["trajectory"] = np.load(trajectory)
        runs.append(run)
    return runs


@flow(name="s_adam-evaluate", task_runner=task_runner())
def evaluate(params: Params, context: StageContext) -> StageReport:
    runs = load_runs(context.data(str(DATA / "runs")))
    summaries = [run_summary(run, params.volatility_epochs) for run in runs]
    table = medians(summaries)
    claims = paper_claims(table, qat_task=qat_task("4bit"), noisy_task=NOISY_TASK, rosenbrock_task=ROSENBROCK_TASK,
                          chattering_ratio=params.chattering_ratio, decide=params.decide_claims)
    write_json(context.out(str(DATA / "claims.json")), claims_document(PAPER, context.profile, context.commit, claims))
    write_csv(context.out(str(DATA / "summary.csv")), summaries)
    metrics = {f"{task}.{optimizer}.{field}": value for (task, optimizer), row in sorted(table.items())
               for field, value in row.items() if value is not None}
    if "sadam_lambda0" in params.optimizers:  # sanity: no brake must be AdamW exactly
        metrics["sanity.sadam_lambda0_vs_adamw.max_abs_accuracy_diff"] = largest_difference(
            summaries, "sadam_lambda0", "adamw", "final_accuracy")
    write_json(context.out(str(DATA / "metrics.json")), metrics)
    folder = context.out(str(DATA / "plots"))
    for task_name in sorted({run["task"] for run in runs if "epochs" in run}):
        plots.epoch_curves(runs, task_name, folder / f"loss_lgi_{task_name}.png")
    plots.rosenbrock_paths([run for run in runs if run["task"] == ROSENBROCK_TASK], folder / "rosenbrock.png")
    return StageReport(metrics=metrics, tags={f"claim.{c.id}": str(c.passed) for c in claims})


STAGES = {"generate": generate, "train": train, "evaluate": evaluate}
