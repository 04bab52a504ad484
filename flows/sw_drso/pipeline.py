"""SW-DRSO: distributionally robust set representations under inference-time element corruption (ICML 2026).

Stages: generate (Task A trimesh point clouds, Task B digit point sets), train (every run group's methods x
seeds, one process task per run, each a safetensors classifier and its log), evaluate (the corruption suite on
every classifier, claims C1-C4, accuracy curves per method).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from prefect import flow

from flows.runtime import task_runner
from flows.stage_task import stage_task
from tasks.core.device import single_torch_thread
from tasks.core.io import write_csv, write_json
from tasks.core.seeding import derive_seed
from tasks.core.stage import StageContext, StageReport
from tasks.sets.corruptions import Corruption, OutlierRegion
from tasks.sets.digit_sets import HIGH as DIGIT_HIGH, LOW as DIGIT_LOW, digit_sets
from tasks.sets.primitive_clouds import CLASSES, primitive_clouds

from . import plots
from .claims import claims as paper_claims
from .claims import method_means
from .params import Params, RunGroup

PAPER = "sw_drso"
MODEL_NAME = f"{PAPER}-classifier"  # the registered model `papers sw-drso classify` uses by default
# Task A's test outliers: the cube [-1, 1]^3 outside the unit ball, which holds every training outlier (the ball
# proposal) and every training point (max norm 1): held out, disjoint from the training corruptions. Task B's: its
# element box (its training proposal, perturbed elements of other sets, is not bounded: no region avoids it).
CLOUD_OUTLIERS = OutlierRegion(low=(-1.0,) * 3, high=(1.0,) * 3, outside_radius=1.0)
DIGIT_OUTLIERS = OutlierRegion(low=tuple(DIGIT_LOW.tolist()), high=tuple(DIGIT_HIGH.tolist()))


def task_file(task_name: str) -> str:
    return f"task{task_name}.npz"


def outlier_region(task_name: str) -> OutlierRegion:
    return CLOUD_OUTLIERS if task_name == "A" else DIGIT_OUTLIERS


def run_name(group: RunGroup, method: str, k: int) -> str:
    return f"{group.task}_{group.encoder}_{method}_s{k}"


def runs(params: Params) -> list[tuple[RunGroup, str, int]]:
    return [(group, method, k) for group in params.runs for method in group.methods for k in range(group.seeds)]


def load_task(path: Path) -> dict:
    with np.load(path) as data:
        return {key: data[key] for key in data.files}


# ---------------------------------------------------------------- generate

@flow(name="sw_drso-generate", task_runner=task_runner())
def generate(params: Params, context: StageContext) -> StageReport:
    folder = context.out("sets")
    folder.mkdir(parents=True)
    a = params.task_a
    classes = CLASSES[: a.classes]
    X_train, y_train = primitive_clouds(classes, a.train_per_class, a.n, a.train_seed)
    X_test, y_test = primitive_clouds(classes, a.test_per_class, a.n, a.test_seed)
    np.savez(folder / task_file("A"), X_train=X_train, y_train=y_train, X_test=X_test, y_test=y_test,
             classes=np.array(classes))
    metrics = {"A.train_sets": len(y_train), "A.test_sets": len(y_test), "A.points_per_set": a.n,
               **{f"A.class_count.{name}": int((y_train == c).sum()) for c, name in enumerate(classes)}}
    if params.task_b is not None:
        b = digit_sets(params.task_b.n, params.task_b.split_seed, params.task_b.test_fraction)
        np.savez(folder / task_file("B"), **b, classes=np.array([str(d) for d in range(10)]))
        metrics |= {"B.train_sets": len(b["y_train"]), "B.test_sets": len(b["y_test"]), "B.points_per_set": params.task_b.n}
    return StageReport(metrics=metrics)


# ---------------------------------------------------------------- train

@stage_task
def train_run(data_path: Path, out_folder: Path, name: str, group: dict, method: str, seed: int, params: dict,
              device: str) -> dict:
    single_torch_thread()
    from tasks.sets.weighted_encoders import EncoderConfig

    from .model_files import save_classifier
    from .training import TrainConfig, train_classifier

    data = load_task(data_path)
    p = Params.model_validate(params)
    encoder = EncoderConfig(pooling=group["encoder"], dim=data["X_train"].shape[2], classes=len(data["classes"]),
                            hidden=p.hidden)
    epochs, lr = p.budget(RunGroup.model_validate(group))
    config = TrainConfig(method=method, epochs=epochs, batch=p.batch, lr=lr,
                         proposal="ball" if group["task"] == "A" else "batch", **p.method.model_dump())
    result = train_classifier(data["X_train"], data["y_train"], encoder, config, seed, device)
    save_classifier(out_folder / f"{name}.safetensors", result.model, [str(c) for c in data["classes"]],
                    task=group["task"], method=method, seed=seed, train_n=int(data["X_train"].shape[1]),
                    outliers=outlier_region(group["task"]).model_dump())
    log = {"name": name, "task": group["task"], "encoder": group["encoder"], "method": method, "seed": seed,
           "wall_time_s": result.wall_time_s, "log": result.log}
    write_json(out_folder / f"{name}.json", log)
    return log


@flow(name="sw_drso-train", task_runner=task_runner("process"))
def train(params: Params, context: StageContext) -> StageReport:
    sets, folder = context.data("sets"), context.out("models")
    folder.mkdir(parents=True)
    futures = [train_run.submit(sets / task_file(group.task), folder, run_name(group, method, k), group.model_dump(),
                                method, derive_seed(params.seed, group.task, group.encoder, k),
                                params.model_dump(), context.device)
               for group, method, k in runs(params)]
    logs = [f.result() for f in futures]
    metrics = {f"{log['name']}.wall_time_s": log["wall_time_s"] for log in logs}
    metrics |= {f"{log['name']}.{key}": value for log in logs for key, value in log["log"][-1].items() if key != "epoch"}
    curves = {f"{log['name']}.clean_loss": [(row["epoch"], row["clean_loss"]) for row in log["log"]] for log in logs}
    registered = next((log["name"] for log in logs if log["task"] == "A" and log["encoder"] == "attention"
                       and log["method"] == "sw_drso"), None)
    models = {MODEL_NAME: f"models/{registered}.safetensors"} if registered else {}
    return StageReport(metrics=metrics, curves=curves, models=models)


# ---------------------------------------------------------------- evaluate

@stage_task
def evaluate_run(model_path: Path, data: dict, suite: list[Corruption], k: int, region: OutlierRegion) -> dict:
    single_torch_thread()
    from .evaluation import corrupted_suite, suite_accuracy
    from .model_files import load_classifier

    model, _, _ = load_classifier(model_path)
    return suite_accuracy(model, corrupted_suite(data["X_test"], suite, k, region), data["y_test"])


@flow(name="sw_drso-evaluate", task_runner=task_runner())
def evaluate(params: Params, context: StageContext) -> StageReport:
    sets, models = context.data("sets"), context.data("models")
    suite = [Corruption(kind=c.kind, r=c.r) for c in params.suite]
    data = {name: load_task(sets / task_file(name)) for name in {group.task for group in params.runs}}
    rows = []
    for group, method, k in runs(params):
        name = run_name(group, method, k)
        log = json.loads((models / f"{name}.json").read_text())
        accuracy = evaluate_run.fn(models / f"{name}.safetensors", data[group.task], suite, k, outlier_region(group.task))
        rows.append({"name": name, "task": group.task, "encoder": group.encoder, "method": method, "seed": k,
                     "wall_time_s": log["wall_time_s"], "accuracy": accuracy})
    claims = paper_claims(rows, params.decide_claims)
    means = {(group.task, group.encoder): method_means(rows, group.task, group.encoder) for group in params.runs}
    attention = means.get(("A", "attention"), {})
    headline = {f"{method}.{key}": attention[method][key] for method in ("erm", "sw_drso") if method in attention
                   for key in ("clean", "mCA")}
    write_csv(context.out("accuracy.csv"),
              [{"task": task_name, "encoder": encoder, "method": method, **row}
               for (task_name, encoder), by_method in means.items() for method, row in by_method.items()])
    folder = context.out("plots")
    for (task_name, encoder), by_method in means.items():
        plots.accuracy_curves({m: row for m, row in by_method.items()}, f"Task {task_name}, {encoder} encoder",
                              folder / f"task{task_name}_{encoder}_accuracy.png")
    metrics = {f"{row['name']}.{key}": value for row in rows for key, value in row["accuracy"].items()}
    metrics |= {f"{t}.{e}.{m}.{key}": value for (t, e), by_method in means.items() for m, row in by_method.items()
                for key, value in row.items()}
    return StageReport(metrics=metrics, claims=claims, headline=headline)


STAGES = {"generate": generate, "train": train, "evaluate": evaluate}
