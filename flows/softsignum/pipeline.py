"""SoftSignum / SoftMuon: smooth sign maps with a temperature schedule after a sign phase (ICML 2026).

Stages: generate (quad-het and mat-het instances per seed, the stdlib character corpus), calibrate (LR grids of
Signum, Muon, AdamW and Lion when it runs, on the char-LM, widened at an edge by the shared rule of
tasks.train.lr_grid), train (every (task, optimizer, seed) run as a Prefect task on worker processes, the clamp
controls included), evaluate (claims C1-C3 with their controls, the pre-transition coincidence check, plots).
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
from tasks.train.charlm import CharLMConfig, CharLMSetting
from tasks.train.corpus import build_stdlib_corpus, load_corpus, save_corpus
from tasks.train.lr_grid import MAX_EXTENSIONS, calibrate_grids
from tasks.train.synthetic import matrix_least_squares, quadratic_heterogeneous

from . import plots
from .claims import evaluate_claims
from .experiments import MUON_FAMILY, SIGN_FAMILY, charlm_run, mat_het_run, quad_het_run
from .params import CharLM, Params
from .variants import base_of

PAPER = "softsignum"
DATA = Path("data") / PAPER
CORPUS = DATA / "stdlib_charlm.npz"
CORPUS_MANIFEST = DATA / "stdlib_charlm.manifest.json"
MAT_OPTIMIZERS = ("muon", "softmuon")
MAX_CURVE_POINTS = 200


def _config(c: CharLM) -> CharLMConfig:
    return CharLMConfig(context=c.context, d_model=c.d_model, n_heads=c.n_heads, n_layers=c.n_layers)


def _charlm_options(params: Params, name: str) -> dict:
    c = params.charlm
    momentum = c.muon_momentum if base_of(name) in MUON_FAMILY else c.sign_momentum
    return {"momentum": momentum, "alpha_sign": params.alpha_sign, "eps": params.eps, "aux_lr": c.aux_lr,
            "tau_max": c.tau_max, "soft_mode": c.soft_mode}


# ---------------------------------------------------------------- generate

@flow(name="softsignum-generate")
def generate(params: Params, context: StageContext) -> StageReport:
    q, m = params.quad_het, params.mat_het
    instances = context.out("instances")
    instances.mkdir(parents=True)
    for s in range(q.seeds):
        np.savez(instances / f"quad_het_{s}.npz", **quadratic_heterogeneous(q.d, seed=derive_seed(params.seed, "quad_het", s)))
    for s in range(m.seeds):
        data = matrix_least_squares(m.m, m.n, m.n_samples, m.sigma, "log_uniform", seed=derive_seed(params.seed, "mat_het", s))
        np.savez(instances / f"mat_het_{s}.npz", **data)
    corpus = build_stdlib_corpus(params.charlm.n_chars)
    staged = context.out(CORPUS.name)
    save_corpus(corpus, staged)  # writes the manifest next to the staged file: move it to its own staged path
    staged.with_name(CORPUS_MANIFEST.name).replace(context.out(CORPUS_MANIFEST.name))
    return StageReport(metrics={"n_chars": corpus.n_chars, "vocab_size": corpus.manifest()["vocab_size"],
                                "quad_het.instances": q.seeds, "mat_het.instances": m.seeds},
                       tags={"corpus.sha256": corpus.sha256, "corpus.python_version": corpus.python_version})


# ---------------------------------------------------------------- calibrate / train: one run per task

@stage_task
def run_job(job: dict, params: Params, root: Path, device: str) -> dict:
    """One (task, optimizer, seed) run; job: task, optimizer, seed, lr, and steps for char-LM grid runs."""
    single_torch_thread()
    name, seed, lr = job["optimizer"], job["seed"], job["lr"]
    if job["task"] == "quad_het":
        q = params.quad_het
        data = dict(np.load(root / DATA / "instances" / f"quad_het_{seed}.npz"))
        options = {"momentum": q.momentum, "dampening": q.dampening, "alpha_sign": params.alpha_sign, "eps": params.eps,
                   "tau_max": q.tau_max}
        return quad_het_run(data, name, params.seed + seed, steps=q.steps, lr=lr, noise_std=q.noise_std,
                            options=options) | {"seed": seed}
    if job["task"] == "mat_het":
        m = params.mat_het
        data = dict(np.load(root / DATA / "instances" / f"mat_het_{seed}.npz"))
        options = {"momentum": m.momentum, "alpha_sign": params.alpha_sign, "eps": params.eps}
        return mat_het_run(data, name, params.seed + seed, steps=m.steps, lr=lr, batch=m.batch, eval_every=m.eval_every,
                           options=options) | {"seed": seed}
    c = params.charlm
    setting = CharLMSetting(steps=job["steps"], batch=c.batch, eval_every=c.eval_every, eval_windows=c.eval_windows,
                            lr_floor=c.lr_floor, config=_config(c), device=device,
                            on_nonfinite=job.get("on_nonfinite", "raise"))
    return charlm_run(load_corpus(root / CORPUS), name, params.seed + seed, setting=setting, lr=lr,
                      options=_charlm_options(params, name)) | {"seed": seed}


def _run_all(jobs: list[dict], params: Params, context: StageContext) -> list[dict]:
    futures = [run_job.submit(job, params, context.root, context.device) for job in jobs]
    return [f.result() for f in futures]


@flow(name="softsignum-calibrate", task_runner=task_runner("process"))
def calibrate(params: Params, context: StageContext) -> StageReport:
    """Every method with a grid (Signum, Muon, AdamW, Lion when it runs): the shared rule of tasks.train.lr_grid
    (one-point grids pass through; a best point at an edge widens the grid, at most MAX_EXTENSIONS times)."""
    cal = params.calibration

    def evaluate(pending: list[tuple[str, float]]) -> list[float]:
        jobs = [{"task": "charlm", "optimizer": name, "seed": 0, "lr": lr, "steps": cal.steps, "on_nonfinite": "stop"}
                for name, lr in pending]
        return [r["final"]["loss"] for r in _run_all(jobs, params, context)]

    results = calibrate_grids(cal.grids(), evaluate, max_extensions=MAX_EXTENSIONS)
    metrics = {}
    for name, result in results.items():
        metrics |= result.metrics(name)
    write_json(context.out("calibration.json"),
               {"steps": cal.steps, "seed": 0, **{name: result.to_json() for name, result in results.items()}})
    return StageReport(metrics=metrics)


def _charlm_lr(name: str, calibrated: dict) -> float:
    """SoftSignum/HardSwitchSign (and their controls) inherit Signum's LR, SoftMuon Muon's (not tuned separately);
    AdamW and Lion have their own."""
    base = base_of(name)
    if base in SIGN_FAMILY:
        return calibrated["signum"]["best_lr"]
    if base in MUON_FAMILY:
        return calibrated["muon"]["best_lr"]
    return calibrated[base]["best_lr"]


def _subsample(values: list, limit: int = MAX_CURVE_POINTS) -> list:
    stride = max(1, -(-len(values) // limit))
    return values[::stride]


def _write_run(folder: Path, record: dict) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    write_json(folder / "record.json", record)
    write_csv(folder / "curve.csv", record["curve"])
    write_json(folder / "metrics.json", {k: record[k] for k in ("final", "lr", "t_sign", "wall_time_s", "tau_max",
                                                                "schedule_at_tau_max", "saturated_after_t_sign")})
    if record["schedule"] is not None:
        np.save(folder / "schedule.npy", np.asarray(record["schedule"]))


@flow(name="softsignum-train", task_runner=task_runner("process"))
def train(params: Params, context: StageContext) -> StageReport:
    calibrated = json.loads(context.data("calibration.json").read_text())
    jobs = [{"task": "quad_het", "optimizer": name, "seed": s, "lr": params.quad_het.lr}
            for name in params.quad_het.optimizers for s in range(params.quad_het.seeds)]
    jobs += [{"task": "mat_het", "optimizer": name, "seed": s, "lr": params.mat_het.lr}
             for name in MAT_OPTIMIZERS for s in range(params.mat_het.seeds)]
    jobs += [{"task": "charlm", "optimizer": name, "seed": s, "lr": _charlm_lr(name, calibrated),
              "steps": params.charlm.steps} for name in params.charlm.optimizers for s in range(params.charlm.seeds)]
    records = _run_all(jobs, params, context)
    runs = context.out("runs")
    curves, metrics = {}, {}
    for r in records:
        _write_run(runs / r["task"] / r["optimizer"] / str(r["seed"]), r)
        prefix = f"{r['task']}.{r['optimizer']}.seed{r['seed']}"
        key = "f" if r["task"] == "quad_het" else "loss"
        curves[f"{prefix}.eval_{key}"] = _subsample([(row["step"], row[key]) for row in r["evals"]])
        soft = [(row["step"], row["tau"]) for row in r["curve"] if row.get("phase") == "soft"]
        if soft:
            curves[f"{prefix}.tau"] = _subsample(soft)
        metrics[f"{prefix}.wall_time_s"] = r["wall_time_s"]
        metrics |= {f"{prefix}.{k}": r[k] for k in ("schedule_at_tau_max", "saturated_after_t_sign") if r[k] is not None}
    return StageReport(metrics=metrics, curves=curves)


# ---------------------------------------------------------------- evaluate

@flow(name="softsignum-evaluate")
def evaluate(params: Params, context: StageContext) -> StageReport:
    records = [json.loads(p.read_text()) for p in sorted(context.data("runs").glob("*/*/*/record.json"))]
    claims, metrics = evaluate_claims(records, deciding=params.decide_claims)
    folder = context.out("plots")
    for task_name in ("quad_het", "mat_het", "charlm"):
        plots.eval_curves(records, task_name, folder / f"{task_name}_curves.png")
        plots.temperature_traces(records, task_name, folder / f"{task_name}_temperature.png")
    return StageReport(metrics=metrics, claims=claims)


STAGES = {"generate": generate, "calibrate": calibrate, "train": train, "evaluate": evaluate}
