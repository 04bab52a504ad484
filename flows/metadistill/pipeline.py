"""MetaDistill: distilling expert optimisation trajectories into a learnable optimiser (LES) (ICML 2026).

Stages: generate (the teachers' trajectories on the five shifted training functions and the stitched knowledge
base), train (the distilled LES and the baseline LES meta-trained by an outer CMA-ES, from the same initial
weights), solve (every variant on BBOB through IOH at the evaluation dims, one IOH instance per seed, and on
Acrobot-v1 as neuroevolution), evaluate (per-function precision tables, claims C1-C3, the dimension-transfer
rows, plots).
"""
from __future__ import annotations

import json
import pickle

import numpy as np
import pandas as pd
import torch
from prefect import flow

from flows.runtime import task_runner
from flows.stage_task import stage_task
from tasks.blackbox.bbob import BBOBProblem
from tasks.blackbox.teachers import default_popsize
from tasks.core.device import single_torch_thread
from tasks.core.io import write_csv, write_json
from tasks.core.seeding import derive_seed
from tasks.core.stage import StageContext, StageReport

from . import plots, summaries
from .claims import claims as paper_claims
from .control import optimiser_runs
from .distill import distill
from .knowledge import collect_episode, stitch
from .les import LES, load, save
from .metatrain import meta_train
from .params import TRAINING, Params, StudentParams
from .rollout import Run, populations_in_budget, run_cmaes, run_student
from .variants import BASELINE, TEACHER, TEACHER_DEFAULT, md, variants

PAPER = "metadistill"


def new_student(student: StudentParams, seed: int) -> LES:
    """LES with initial weights from `seed` (the baseline and the distilled student start from the same ones)."""
    torch.manual_seed(seed)
    return LES(student.att_dim, student.mlp_dim, student.sigma_init).double()


# ---------------------------------------------------------------- generate

@stage_task
def collect(name: str, episode: int, params: Params) -> dict:
    k = params.knowledge
    return collect_episode(name, k.dim, k.popsize, k.generations, list(k.teachers),
                           derive_seed(params.seed, "knowledge", episode, name)) | {"episode": episode}


@flow(name="metadistill-generate", task_runner=task_runner())
def generate(params: Params, context: StageContext) -> StageReport:
    k = params.knowledge
    futures = [collect.submit(name, e, params) for e in range(k.episodes) for name in TRAINING]
    raw = [f.result() for f in futures]
    stitched = [{"episode": r["episode"], "function": r["function"], "bias": r["bias"]} | stitch(r["trajectories"], k.interval)
                for r in raw]
    with open(context.out("teacher_raw.pkl"), "wb") as handle:
        pickle.dump({"teachers": list(k.teachers), "episodes": raw}, handle)
    with open(context.out("teacher_sel.pkl"), "wb") as handle:
        pickle.dump({"interval": k.interval, "mode": "best", "episodes": stitched}, handle)
    picks = [p for s in stitched for p in s["picks"]]
    metrics = {f"picks.{t}": float(picks.count(t)) for t in k.teachers}
    for t in k.teachers:
        for name in TRAINING:
            finals = [r["trajectories"][t]["best_so_far"][-1] for r in raw if r["function"] == name]
            metrics[f"{name}.{t}.log10_final_best"] = float(np.mean(np.log10(np.maximum(finals, 1e-300))))
    return StageReport(metrics=metrics | {"trajectories": float(len(stitched))})


# ---------------------------------------------------------------- train

@stage_task
def distill_task(model: LES, knowledge: list[list[dict]], params: Params) -> dict:
    single_torch_thread()
    k, d = params.knowledge, params.distill
    return distill(model, knowledge, k.popsize, k.interval, d.epochs, d.lr, d.weight_decay, d.clip, d.warmup,
                   derive_seed(params.seed, "distill"))


@stage_task
def meta_task(model: LES, params: Params) -> dict:
    single_torch_thread()
    k, m = params.knowledge, params.meta
    return meta_train(model, k.dim, k.popsize, k.generations, m.popsize, m.epochs, m.sigma0,
                      derive_seed(params.seed, "meta"))


@flow(name="metadistill-train", task_runner=task_runner())
def train(params: Params, context: StageContext) -> StageReport:
    with open(context.data("teacher_sel.pkl"), "rb") as handle:
        stitched = pickle.load(handle)["episodes"]
    knowledge = [[s for s in stitched if s["episode"] == e] for e in range(params.knowledge.episodes)]
    init = derive_seed(params.seed, "student-init")
    student, baseline = new_student(params.student, init), new_student(params.student, init)
    distilled, meta = distill_task.submit(student, knowledge, params), meta_task.submit(baseline, params)
    distilled, meta = distilled.result(), meta.result()
    folder = context.out("models")
    folder.mkdir(parents=True)
    save(folder / "les_md.pt", student, distilled["best_state"])
    save(folder / "les_base.pt", baseline)
    write_json(folder / "training.json", {"distill_loss": distilled["losses"], "best_epoch": distilled["best_epoch"],
                                          "distill_wall_time_s": distilled["wall_time_s"],
                                          "meta_curve": meta["curve"], "meta_wall_time_s": meta["wall_time_s"]})
    ratio = meta["wall_time_s"] / distilled["wall_time_s"]
    return StageReport(metrics={"distill.best_epoch": float(distilled["best_epoch"]),
                                "distill.final_loss": distilled["losses"][-1],
                                "distill.wall_time_s": distilled["wall_time_s"], "meta.wall_time_s": meta["wall_time_s"],
                                "meta_over_distill_wall_time": ratio},
                       curves={"distill.kl": distilled["losses"], "meta.median_log10_best": meta["curve"]},
                       models={f"{PAPER}-les_md": "models/les_md.pt",
                               f"{PAPER}-les_base": "models/les_base.pt"})


# ---------------------------------------------------------------- solve

def run_rows(run: Run, variant: str, problem: BBOBProblem, seed: int) -> list[dict]:
    return [{"variant": variant, "fid": problem.fid, "dim": problem.dim, "seed": seed, "instance": problem.instance,
             "generation": g, "evaluations": int(run.evaluations[g]), "best_generation": float(run.best_generation[g]),
             "best_so_far": float(run.best_so_far[g]), "f_opt": problem.f_opt, "wall_time_s": run.wall_time_s}
            for g in range(len(run.best_generation))]


@stage_task
def solve_function(fid: int, dim: int, models: dict[str, LES], params: Params) -> list[dict]:
    """Every variant on BBOB f`fid` at `dim`, seed k on IOH instance k + 1."""
    single_torch_thread()
    e = params.evaluation
    populations = populations_in_budget(e.popsize, e.budget)
    rows = []
    for k in range(e.seeds):
        problem = BBOBProblem(fid, k + 1, dim)
        seed = derive_seed(params.seed, "bbob", fid, dim, k)
        runs = {BASELINE: run_student(models[BASELINE], problem, problem.lower, problem.upper, e.popsize, populations, seed)}
        for j in sorted(e.ssft_js):
            runs[md(j)] = run_student(models["md"], problem, problem.lower, problem.upper, e.popsize, populations, seed,
                                      ssft_j=j, ssft_lr=e.ssft_lr)
        runs[TEACHER] = run_cmaes(problem, problem.lower, problem.upper, e.popsize, populations, seed)
        small = default_popsize(dim)
        runs[TEACHER_DEFAULT] = run_cmaes(problem, problem.lower, problem.upper, small,
                                          populations_in_budget(small, e.budget), seed)
        for variant, run in runs.items():
            rows += run_rows(run, variant, problem, k)
    return rows


def control_rows(run: Run, variant: str, seed: int) -> list[dict]:
    """A run's per-generation returns (the negated fitness) on Acrobot-v1."""
    return [{"variant": variant, "env": "Acrobot-v1", "seed": seed, "generation": g,
             "evaluations": int(run.evaluations[g]), "best_generation_return": -float(run.best_generation[g]),
             "best_so_far_return": -float(run.best_so_far[g]), "wall_time_s": run.wall_time_s}
            for g in range(len(run.best_generation))]


@stage_task
def solve_control(k: int, models: dict[str, LES], params: Params) -> list[dict]:
    """Every variant on Acrobot-v1 from control seed k (C3)."""
    single_torch_thread()
    c, e = params.control, params.evaluation
    runs = optimiser_runs(models, c.hidden, c.popsize, c.populations, c.steps, list(e.ssft_js), e.ssft_lr,
                          derive_seed(params.seed, "acrobot", k))
    return [row for variant, run in runs.items() for row in control_rows(run, variant, k)]


@flow(name="metadistill-solve", task_runner=task_runner())
def solve(params: Params, context: StageContext) -> StageReport:
    models = {BASELINE: load(context.data("models", "les_base.pt")),
              "md": load(context.data("models", "les_md.pt"))}
    e = params.evaluation
    futures = [solve_function.submit(fid, dim, models, params) for dim in e.dims for fid in e.functions]
    control_futures = [solve_control.submit(k, models, params) for k in range(params.control.seeds)]
    table = pd.DataFrame([row for f in futures for row in f.result()])
    control = pd.DataFrame([row for f in control_futures for row in f.result()])
    folder = context.out("runs")
    folder.mkdir(parents=True)
    table.to_parquet(folder / "bbob.parquet", index=False)
    control.to_parquet(folder / "control.parquet", index=False)
    final = summaries.final_rows(table)
    times = final.groupby("variant").wall_time_s.sum()
    control_times = summaries.final_rows(control, ["variant", "seed"]).groupby("variant").wall_time_s.sum()
    return StageReport(metrics={f"{v}.wall_time_s": float(t) for v, t in times.items()}
                       | {f"acrobot.{v}.wall_time_s": float(t) for v, t in control_times.items()}
                       | {"runs": float(len(final)), "evaluations_per_run": float(final.evaluations.max()),
                          "acrobot.runs": float(control.groupby(["variant", "seed"]).ngroups)})


# ---------------------------------------------------------------- evaluate

@flow(name="metadistill-evaluate", task_runner=task_runner())
def evaluate(params: Params, context: StageContext) -> StageReport:
    table = pd.read_parquet(context.data("runs", "bbob.parquet"))
    control = pd.read_parquet(context.data("runs", "control.parquet"))
    training = json.loads(context.data("models", "training.json").read_text())
    e = params.evaluation
    names = variants(list(e.ssft_js))
    per_function = summaries.per_function(table, names)
    returns = summaries.control_returns(control, names)
    claims = paper_claims(per_function, summaries.seed_precisions(table, names), list(e.dims), params.knowledge.dim,
                          names, params.seed, params.decide_claims, returns)
    headline = summaries.headline(per_function, e.dims[0])
    write_csv(context.out("summary.csv"), per_function)
    folder = context.out("plots")
    for dim in e.dims:
        plots.final_precision(per_function, dim, names, folder / f"final_precision_d{dim}.png")
        plots.ecdf(table[table.dim == dim], names, folder / f"ecdf_d{dim}.png")
    plots.training(training, folder / "training.png")
    return StageReport(metrics=summaries.metrics(per_function, names) | summaries.control_metrics(returns),
                       curves={"distill.kl": list(training["distill_loss"])},
                       claims=claims, headline=headline)


STAGES = {"generate": generate, "train": train, "solve": solve, "evaluate": evaluate}
