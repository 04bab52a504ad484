"""BaLoRA: balanced low-rank adaptation (Castin, Nadjahi, Ablin, Peyré; ICML 2026).

Stages: generate (the synthetic problem of testbeds A/B; testbed C's stdlib corpora), train (the tiny GPT-2 base,
pre-trained on stdlib code), solve (testbeds A and B; testbed C: every method over the lr x scale grid at seed 0,
chosen on the validation windows, then the other seeds at each method's best point, on worker processes; C4's
timing repeats on a larger seeded base), evaluate (claims C1-C4 on the test windows, plots).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from prefect import flow

from flows.runtime import task_runner
from flows.stage_task import stage_task
from tasks.core.device import single_torch_thread
from tasks.core.io import write_json
from tasks.core.seeding import derive_seed
from tasks.core.stage import StageContext, StageReport

from . import plots
from .claims import claims as paper_claims
from .params import Params
from .summaries import best_points, summarize


# ---------------------------------------------------------------- generate

@flow(name="balora-generate", task_runner=task_runner())
def generate(params: Params, context: StageContext) -> StageReport:
    from .corpus import build_corpora, save_corpora
    from .synthetic_data import synthetic_problem

    folder = context.out("generate")
    folder.mkdir(parents=True)
    s = params.synthetic
    problem = synthetic_problem(s.a, s.b, s.r, max(s.inits, params.conditioning.inits),
                                derive_seed(params.seed, "synthetic"))
    np.savez(folder / "synthetic.npz", **problem)
    sizes = save_corpora(build_corpora(params.corpus.pretrain_chars, params.corpus.finetune_chars), folder)
    sigma = np.linalg.svd(problem["T"] - problem["W0"], compute_uv=False)
    write_json(folder / "manifest.json", sizes | {"sigma": sigma.tolist()})
    return StageReport(metrics=sizes | {"sigma_1": float(sigma[0]), f"sigma_{s.r}": float(sigma[s.r - 1]),
                                        f"sigma_{s.r + 1}": float(sigma[s.r])})


# ---------------------------------------------------------------- train

@flow(name="balora-train", task_runner=task_runner())
def train(params: Params, context: StageContext) -> StageReport:
    single_torch_thread()
    from .experiments import train_base

    folder = context.out("train")
    folder.mkdir(parents=True)
    losses = train_base(params, context.data("generate"), folder / "base", derive_seed(params.seed, "base"))
    write_json(folder / "pretrain_losses.json", losses)
    return StageReport(metrics={"pretrain_final_loss": float(np.mean(losses[-10:]))}, curves={"pretrain_loss": losses})


# ---------------------------------------------------------------- solve

@stage_task
def synthetic_testbeds(params: Params, generated: Path, out: Path) -> dict:
    single_torch_thread()
    from .experiments import lr_grid, convergence_runs, conditioning_runs

    with np.load(generated / "synthetic.npz") as data:
        problem = {k: data[k] for k in data.files}
    s, c = params.synthetic, params.conditioning
    first = dict(problem, B0=problem["B0"][: s.inits])
    runs = convergence_runs(first, s.steps, {"sign": lr_grid(s.sign_lrs), "gd": lr_grid(s.gd_lrs)})
    write_json(out / "synthetic_runs.json", runs)
    write_json(out / "hessian.json", conditioning_runs(problem, c.steps, c.lr, c.decay, c.inits))
    return {"synthetic_runs": len(runs)}


@stage_task
def finetune_task(params: Params, generated: Path, base: Path, method: str, lr: float, scale: float, k: int) -> dict:
    single_torch_thread()
    from .experiments import finetune_run

    # seed k: the same LoRA init and batches for every method and grid point
    run = finetune_run(params, generated, base, method, lr, scale, derive_seed(params.seed, "finetune", k),
                       derive_seed(params.seed, "eval_windows"))
    return run | {"seed_index": k}


@stage_task
def timing_task(params: Params, generated: Path, out: Path) -> dict:
    single_torch_thread()
    from tasks.lm.corpus import CHAR_VOCAB
    from tasks.lm.model import TinyLMConfig, build_model, num_parameters

    from .experiments import load_ids
    from .timing import timing_repeats

    t = params.timing
    # the step cost does not depend on what the base has learnt: a seeded, untrained base of the timing size
    base = build_model(TinyLMConfig(**t.model.model_dump()), CHAR_VOCAB, derive_seed(params.seed, "timing_base"))
    seeds = [derive_seed(params.seed, "timing", k) for k in range(t.repeats)]
    runs = timing_repeats(base, load_ids(generated, "finetune_train"), params.finetune.rank, t, seeds,
                          tuple(params.finetune.methods))
    timing = {"model": t.model.model_dump(), "base_parameters": num_parameters(base), "batch": t.batch,
              "repeats": runs}
    write_json(out / "timing.json", timing)
    return timing


@flow(name="balora-solve", task_runner=task_runner("process"))
def solve(params: Params, context: StageContext) -> StageReport:
    generated, base = context.data("generate"), context.data("train") / "base"
    folder = context.out("solve")
    folder.mkdir(parents=True)
    f = params.finetune
    synthetic = synthetic_testbeds.submit(params, generated, folder)
    # method-inner: the methods of one grid point run next to each other and meet the same load (C4 times them)
    grid = [finetune_task.submit(params, generated, base, method, lr, scale, 0)
            for lr in f.lrs for scale in f.scales for method in f.methods]
    runs = [g.result() for g in grid]
    timing = timing_task.submit(params, generated, folder)  # after the grid: fewer processes compete
    best = best_points(runs)
    repeats = [finetune_task.submit(params, generated, base, method, *best[method], k)
               for k in range(1, f.best_seeds) for method in f.methods]
    runs += [r.result() for r in repeats]
    write_json(folder / "finetune_runs.json", runs)
    done = synthetic.result() | {"c4_step_ratio": float(np.median([r["ratio"] for r in timing.result()["repeats"]]))}
    return StageReport(metrics=done | {"finetune_runs": len(runs)}
                       | {f"{m}.best_grid_val": min(r["final_eval"] for r in runs if r["method"] == m)
                          for m in f.methods})


# ---------------------------------------------------------------- evaluate

@flow(name="balora-evaluate", task_runner=task_runner())
def evaluate(params: Params, context: StageContext) -> StageReport:
    solved = context.data("solve")
    synthetic = json.loads((solved / "synthetic_runs.json").read_text())
    conditioning = json.loads((solved / "hessian.json").read_text())
    finetuning = json.loads((solved / "finetune_runs.json").read_text())
    timing = json.loads((solved / "timing.json").read_text())
    summary = summarize(params, synthetic, conditioning, finetuning, timing)
    claims = paper_claims(summary, params.decide_claims, params.finetune.steps)
    headline = {f"{m}_test": row["final_mean"] for m, row in summary["C"].items()}
    write_json(context.out("summary.json"), {k: v for k, v in summary.items() if k != "curves"})
    folder = context.out("plots")
    plots.synthetic_curves(synthetic, "sign", folder / "synthetic_sign_descent.png")
    plots.synthetic_curves(synthetic, "gd", folder / "synthetic_gd.png")
    plots.condition_numbers(conditioning, folder / "condition_numbers.png")
    plots.eval_curves(summary, folder / "finetune_eval_loss.png")
    plots.grid_heatmaps(summary, folder / "finetune_grid.png")
    curves = {f"{m}.eval_loss": [[s, v] for s, v in zip(row["steps"], row["mean_curve"])]
              for m, row in summary["C"].items()}
    return StageReport(metrics=summary["flat"], curves=curves, claims=claims, headline=headline)


STAGES = {"generate": generate, "train": train, "solve": solve, "evaluate": evaluate}
