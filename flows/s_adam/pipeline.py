"""S-Adam: singularity-aware Adam, AdamW braked by a randomized probe of the local geometry (ICML 2026).

Stages: generate (digits splits per seed, clean and noisy training labels), train (every
(task, optimizer, seed) run on worker processes: digits QAT, digits with noisy labels and small
batches, nonsmooth Rosenbrock), control (per digits setting, AdamW at lr x S-Adam's measured mean
damping, from train's S-Adam runs: controls.py), evaluate (claims C1-C3 with their controls, summaries, plots).
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import sklearn
import torch
from prefect import flow

from flows.runtime import task_runner
from flows.stage_task import stage_task
from tasks.core.device import single_torch_thread
from tasks.core.io import write_csv, write_json
from tasks.core.seeding import derive_seed
from tasks.core.stage import StageContext, StageReport
from tasks.train.digits import QUANT_4BIT, QUANT_CIFAR100_2BIT, digits_split, noisy_labels

from . import plots
from .claims import claims as paper_claims
from .claims import largest_difference, medians, run_summary
from .controls import control_details, damped_options, measured_damping
from .experiments import run_rosenbrock, train_digits
from .params import CONTROL, OptimizerOptions, Params

QUANT = {"4bit": QUANT_4BIT, "cifar100_2bit": QUANT_CIFAR100_2BIT}
NOISY_TASK, ROSENBROCK_TASK = "digits-noisy-smallbatch", "ns-rosenbrock"
MAX_CURVE_POINTS = 200


def qat_task(variant: str) -> str:
    return f"digits-qat-{variant}"


def options_of(config: OptimizerOptions) -> dict:
    return config.model_dump(exclude={"kind"})


# ---------------------------------------------------------------- generate

@stage_task
def make_split(seed: int, test_fraction: float, label_noise: float) -> dict:
    split = digits_split(seed, test_fraction, scaling="pm1")
    noisy = noisy_labels(split.y_train, label_noise, 10, torch.Generator().manual_seed(derive_seed(seed, "label-noise")))
    return {"x_train": split.x_train.numpy(), "y_train": split.y_train.numpy(), "y_train_noisy": noisy.numpy(),
            "x_test": split.x_test.numpy(), "y_test": split.y_test.numpy(), "n_classes": 10}


@flow(name="s_adam-generate", task_runner=task_runner())
def generate(params: Params, context: StageContext) -> StageReport:
    folder = context.out("splits")
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
    write_json(context.out("manifest.json"), manifest)
    return StageReport(metrics={"splits": len(params.seeds),
                                "noisy_fraction": float(np.mean([s["labels_changed"] / s["n_train"]
                                                                 for s in manifest["splits"].values()]))})


# ---------------------------------------------------------------- train

@stage_task
def digits_run(split_path: Path, task_name: str, labels: str, optimizer: str, kind: str, options: dict, seed: int,
               epochs: int, batch: int, hidden: tuple[int, ...], quant, device: str) -> dict:
    single_torch_thread()
    with np.load(split_path) as arrays:
        data = dict(arrays)
    run = train_digits(data, labels, kind=kind, options=options, seed=seed, epochs=epochs, batch=batch, hidden=hidden,
                       quant=quant, device=device)
    return {"task": task_name, "optimizer": optimizer, "seed": seed, "kind": kind, "options": options} | run


@stage_task
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


def digits_settings(params: Params) -> dict[str, tuple]:
    """task -> (labels, epochs, batch, quant) of every digits setting: the QAT variants, then noisy small batch."""
    return {qat_task(variant): ("y_train", params.qat.epochs, params.qat.batch, QUANT[variant])
            for variant in params.qat.variants} | {
        NOISY_TASK: ("y_train_noisy", params.noisy.epochs, params.noisy.batch, None)}


@flow(name="s_adam-train", task_runner=task_runner("process"))
def train(params: Params, context: StageContext) -> StageReport:
    splits = context.data("splits")
    hidden = tuple(params.hidden)
    jobs = []
    for seed in params.seeds:
        split = splits / f"digits_split_{seed}.npz"
        for name, config in params.optimizers.items():
            for task_name, (labels, epochs, batch, quant) in digits_settings(params).items():
                jobs.append(digits_run.submit(split, task_name, labels, name, config.kind, options_of(config), seed,
                                              epochs, batch, hidden, quant, context.device))
        for name, config in params.rosenbrock.optimizers.items():
            jobs.append(rosenbrock_run.submit(name, config.kind, options_of(config), seed, params.rosenbrock.start,
                                              params.rosenbrock.steps))
    runs = [job.result() for job in jobs]
    folder = context.out("runs")
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


# ---------------------------------------------------------------- control and evaluate

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


@flow(name="s_adam-control", task_runner=task_runner("process"))
def control(params: Params, context: StageContext) -> StageReport:
    """Per digits setting: S-Adam's measured mean damping from train's runs, then AdamW at lr x that damping on the
    same split, labels, seeds, epochs and batch (controls.py). Writes controls/damping.json and the runs."""
    summaries = [run_summary(run, params.volatility_epochs)
                 for run in load_runs(context.data("runs")) if "epochs" in run]
    splits, hidden = context.data("splits"), tuple(params.hidden)
    adamw = options_of(params.optimizers["adamw"])
    record, jobs = {}, []
    for task_name, (labels, epochs, batch, quant) in digits_settings(params).items():
        measured = measured_damping(summaries, task_name)
        options = damped_options(adamw, measured["damping"])
        record[task_name] = measured | {"adamw_lr": adamw["lr"], "lr": options["lr"], "options": options}
        for seed in params.seeds:
            jobs.append(digits_run.submit(splits / f"digits_split_{seed}.npz", task_name, labels, CONTROL, "adamw",
                                          options, seed, epochs, batch, hidden, quant, context.device))
    runs = [job.result() for job in jobs]
    folder = context.out("controls")
    for run in runs:
        write_run(folder, run)
    write_json(folder / "damping.json", record)
    metrics = {"runs": len(runs)}
    for (task_name, _), row in medians([run_summary(run, params.volatility_epochs) for run in runs]).items():
        metrics |= {f"{task_name}.{CONTROL}.{key}": value for key, value in
                    (("damping", record[task_name]["damping"]), ("lr", record[task_name]["lr"]),
                     ("final_accuracy", row["final_accuracy"]))}
    curves = {f"{run['task']}.{CONTROL}.seed{run['seed']}.test_accuracy": [(r["epoch"], r["test_accuracy"])
                                                                          for r in run["epochs"]] for run in runs}
    return StageReport(metrics=metrics, curves=curves)


@flow(name="s_adam-evaluate", task_runner=task_runner())
def evaluate(params: Params, context: StageContext) -> StageReport:
    runs = load_runs(context.data("runs"))
    controls = context.data("controls")
    control_runs, damping = load_runs(controls), json.loads((controls / "damping.json").read_text())
    summaries = [run_summary(run, params.volatility_epochs) for run in runs]
    control_summaries = [run_summary(run, params.volatility_epochs) for run in control_runs]
    table = medians(summaries + control_summaries)
    claims = paper_claims(summaries, qat_task=qat_task("4bit"), noisy_task=NOISY_TASK, rosenbrock_task=ROSENBROCK_TASK,
                          chattering_ratio=params.chattering_ratio, deciding=params.decide_claims,
                          controls={task: control_details(table, task, record) for task, record in damping.items()})
    write_csv(context.out("summary.csv"), summaries + control_summaries)
    metrics = {f"{task}.{optimizer}.{field}": value for (task, optimizer), row in sorted(table.items())
               for field, value in row.items() if value is not None}
    metrics |= {f"{task}.{CONTROL}.{key}": row[key] for task, row in sorted(damping.items()) for key in ("damping", "lr")}
    if "sadam_lambda0" in params.optimizers:  # sanity: no brake must be AdamW exactly
        metrics["sanity.sadam_lambda0_vs_adamw.max_abs_accuracy_diff"] = largest_difference(
            summaries, "sadam_lambda0", "adamw", "final_accuracy")
    folder = context.out("plots")
    for task_name in sorted({run["task"] for run in runs if "epochs" in run}):
        plots.epoch_curves(runs + control_runs, task_name, folder / f"loss_lgi_{task_name}.png")
    plots.rosenbrock_paths([run for run in runs if run["task"] == ROSENBROCK_TASK], folder / "rosenbrock.png")
    return StageReport(metrics=metrics, claims=claims)


STAGES = {"generate": generate, "train": train, "control": control, "evaluate": evaluate}
