"""LiMuon: Muon with a STORM variance-reduced estimator kept in low rank by randomized SVD (ICML 2026).

Stages: generate (mat-ls instances per sigma and seed, the stdlib character corpus), calibrate (Muon's
LR on the char-LM, which every LiMuon variant reuses, and AdamW's, by the shared widening rule of
tasks.train.lr_grid), train (every (task, optimizer, seed) run as a
Prefect task on worker processes), evaluate (claims C1 memory, C2 mat-ls, C3 char-LM; plots).
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
from tasks.train.synthetic import matrix_least_squares

from . import claims, plots
from .experiments import MatLsSetting, MuonFamily, charlm_run, mat_ls_run
from .params import CharLM, Params, Shared
from .variants import parse_variant

MAX_CURVE_POINTS = 200


def muon_family(shared: Shared, lr: float, aux_lr: float = 3e-3, adamw_lr: float = 3e-3) -> MuonFamily:
    return MuonFamily(lr=lr, aux_lr=aux_lr, adamw_lr=adamw_lr, **shared.model_dump())


def charlm_setting(c: CharLM, steps: int, device: str, on_nonfinite: str = "raise") -> CharLMSetting:
    config = CharLMConfig(context=c.context, d_model=c.d_model, n_heads=c.n_heads, n_layers=c.n_layers)
    return CharLMSetting(steps=steps, batch=c.batch, eval_every=c.eval_every, eval_windows=c.eval_windows,
                         config=config, device=device, on_nonfinite=on_nonfinite)


def subsample(values: list, limit: int = MAX_CURVE_POINTS) -> list[tuple[int, float]]:
    """(step, value) pairs, at most about `limit` of them, always keeping the last."""
    stride = max(1, -(-len(values) // limit))
    return [(i, v) for i, v in enumerate(values) if i % stride == 0 or i == len(values) - 1]


# ---------------------------------------------------------------- generate

@flow(name="limuon-generate")
def generate(params: Params, context: StageContext) -> StageReport:
    m = params.mat_ls
    folder = context.out("mat_ls")
    folder.mkdir(parents=True, exist_ok=True)
    for sigma in m.sigmas:
        for seed in params.seeds:
            data = matrix_least_squares(m.m, m.n, m.n_samples, sigma, "identity", seed=derive_seed(seed, "mat-ls", sigma))
            np.savez(folder / f"mat_ls_{sigma}_{seed}.npz", **data)
    corpus = build_stdlib_corpus(params.charlm.n_chars)
    corpus_folder = context.out("corpus")
    save_corpus(corpus, corpus_folder / "stdlib_charlm.npz")
    return StageReport(metrics={"mat_ls.instances": len(m.sigmas) * len(params.seeds), "charlm.n_chars": corpus.n_chars,
                                "charlm.n_train": len(corpus.train), "charlm.n_val": len(corpus.val)},
                       tags={"corpus.sha256": corpus.sha256, "corpus.python_version": corpus.python_version})


# ---------------------------------------------------------------- calibrate

@stage_task
def charlm_task(corpus_path: Path, variant: str, setting: CharLMSetting, hp: MuonFamily, seed: int) -> dict:
    single_torch_thread()
    return charlm_run(load_corpus(corpus_path), variant, setting, hp, seed)


@stage_task
def mat_ls_task(path: Path, sigma: float, variant: str, setting: MatLsSetting, hp: MuonFamily, seed: int) -> dict:
    single_torch_thread()
    with np.load(path) as arrays:
        data = dict(arrays)
    return mat_ls_run(data, variant, setting, hp, seed) | {"sigma": sigma}


@flow(name="limuon-calibrate", task_runner=task_runner("process"))
def calibrate(params: Params, context: StageContext) -> StageReport:
    """Muon's and (when it runs) AdamW's LR by the shared rule of tasks.train.lr_grid (one-point grids pass
    through; a best point at an edge widens the grid, at most MAX_EXTENSIONS times); a diverging run stops."""
    c, cal = params.charlm, params.calibration
    setting = charlm_setting(c, cal.steps, context.device, on_nonfinite="stop")
    corpus = context.data("corpus", "stdlib_charlm.npz")

    def evaluate(pending: list[tuple[str, float]]) -> list[float]:  # lr is Muon's lr or AdamW's adamw_lr
        futures = [charlm_task.submit(corpus, name, setting, muon_family(c.shared, lr, c.aux_lr, adamw_lr=lr), cal.seed)
                   for name, lr in pending]
        return [f.result()["final_val_loss"] for f in futures]

    results = calibrate_grids(cal.grids(), evaluate, max_extensions=MAX_EXTENSIONS)
    write_json(context.out("calibration.json"),
               {"steps": cal.steps, "seed": cal.seed, **{name: result.to_json() for name, result in results.items()}})
    metrics = {}
    for name, result in results.items():
        metrics |= result.metrics(name)
    return StageReport(metrics=metrics)


def calibrated_lrs(calibration: dict) -> dict[str, float]:
    """muon_lr (every Muon-family variant) and adamw_lr (when AdamW was calibrated) from calibration.json."""
    return {f"{name}_lr": calibration[name]["best_lr"] for name in ("muon", "adamw") if name in calibration}


# ---------------------------------------------------------------- train

def _cost(variant: str) -> int:
    """Relative run cost (gradient evaluations), to start the longest runs first."""
    v = parse_variant(variant)
    return v.steps_factor * (2 if v.family == "limuon" else 1)


def _run_folder(record: dict) -> str:
    where = f"sigma{record['sigma']}_seed{record['seed']}" if record["task"] == "mat_ls" else f"seed{record['seed']}"
    return f"{record['task']}/{record['optimizer']}/{where}"


def save_run(folder: Path, record: dict) -> None:
    """record.json (everything), metrics.json (finals), curve.csv and evals.csv, state.json."""
    folder.mkdir(parents=True, exist_ok=True)
    write_json(folder / "record.json", record)
    write_json(folder / "metrics.json", {k: record[k] for k in ("final", "wall_time_s", "grad_evals", "steps")}
               | {k: record[k] for k in ("final_loss", "final_val_loss") if k in record})
    write_csv(folder / "curve.csv", record["curve"])
    write_csv(folder / "evals.csv", record["evals"])
    write_json(folder / "state.json", record["state"])


@flow(name="limuon-train", task_runner=task_runner("process"))
def train(params: Params, context: StageContext) -> StageReport:
    m, c = params.mat_ls, params.charlm
    lrs = calibrated_lrs(json.loads(context.data("calibration.json").read_text()))
    lr, adamw_lr = lrs["muon_lr"], lrs.get("adamw_lr", MuonFamily.adamw_lr)  # the validator: AdamW runs => calibrated
    corpus = context.data("corpus", "stdlib_charlm.npz")
    jobs = [(_cost(v), "charlm", v, seed) for v in c.optimizers for seed in params.seeds]
    jobs += [(_cost(v), "mat_ls", v, seed, sigma) for v in m.optimizers for seed in params.seeds for sigma in m.sigmas]
    futures = []
    for _, kind, variant, seed, *sigma in sorted(jobs, key=lambda j: -j[0]):
        if kind == "charlm":
            futures.append(charlm_task.submit(corpus, variant, charlm_setting(c, c.steps, context.device),
                                              muon_family(c.shared, lr, c.aux_lr, adamw_lr), seed))
        else:
            path = context.data("mat_ls", f"mat_ls_{sigma[0]}_{seed}.npz")
            futures.append(mat_ls_task.submit(path, sigma[0], variant, MatLsSetting(m.steps, m.batch),
                                              muon_family(m.shared, m.lr), seed))
    records = [f.result() for f in futures]
    out = context.out("runs")
    curves = {}
    for record in records:
        save_run(out / _run_folder(record), record)
        if record["seed"] == params.seeds[0]:
            sigma = f".sigma{record['sigma']}" if record["task"] == "mat_ls" else ""
            curves[f"{record['task']}.{record['optimizer']}{sigma}.train_loss"] = subsample([r["loss"] for r in record["curve"]])
    return StageReport(metrics={"runs": len(records)} | lrs | claims.summary_metrics(records), curves=curves)


# ---------------------------------------------------------------- evaluate

def load_runs(folder: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*/*/*/record.json"))]


@flow(name="limuon-evaluate")
def evaluate(params: Params, context: StageContext) -> StageReport:
    runs = load_runs(context.data("runs"))
    deciding = params.decide_claims
    checked = [claims.memory_claim(runs, deciding), claims.matls_claim(runs, deciding), claims.charlm_claim(runs, deciding)]
    metrics = claims.summary_metrics(runs) | {f"claim.{c.id}.ours": c.ours for c in checked if c.ours is not None}
    folder = context.out("plots")
    plots.loss_curves(runs, folder / "loss_curves.png")
    plots.estimator_error(runs, folder / "estimator_error.png")
    plots.state_sizes(runs, folder / "state_sizes.png")
    plots.compression_traces(runs, folder / "compression_error.png")
    return StageReport(metrics=metrics, claims=checked)


STAGES = {"generate": generate, "calibrate": calibrate, "train": train, "evaluate": evaluate}
