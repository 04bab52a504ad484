"""lambda-GRPO: GRPO is secretly a process reward model (Sullivan, Koller; ICML 2026).

Stages: generate (chain-arithmetic validation / test prompts and noisy-teacher SFT traces), train (one SFT
policy per seed, a tiny GPT-2 from tasks.lm), solve (RL from each SFT policy with GRPO and lambda-GRPO, same
seeds and learning rate, per RL setting; worker processes), evaluate (C1 gradient identity on the seed-0 SFT
policy, C2-C4 from the curves, plots).
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
from .experiments import c1_identity, rl_settings, run_label, save_problems, sft_policy, sft_traces
from .params import Params


# ---------------------------------------------------------------- generate

@flow(name="lambda_grpo-generate", task_runner=task_runner())
def generate(params: Params, context: StageContext) -> StageReport:
    folder = context.out("generate")
    folder.mkdir(parents=True)
    sizes = save_problems(params, folder)
    noisy = sft_traces(params, folder / "sft_traces.jsonl")
    return StageReport(metrics=sizes | {"sft_noisy_fraction": noisy})


# ---------------------------------------------------------------- train

@stage_task
def train_seed(params: Params, generated: Path, out: Path, k: int, device: str) -> dict:
    single_torch_thread()
    return sft_policy(params, generated, out, derive_seed(params.seed, "sft", k), device)


@flow(name="lambda_grpo-train", task_runner=task_runner("process"))
def train(params: Params, context: StageContext) -> StageReport:
    generated, folder = context.data("generate"), context.out("train")
    folder.mkdir(parents=True)
    futures = [train_seed.submit(params, generated, folder / f"sft_policy_seed{k}", k, context.device)
               for k in range(params.seeds)]
    rows = [f.result() for f in futures]
    write_json(folder / "sft.json", rows)
    return StageReport(metrics={"initial_greedy_val_mean": float(np.mean([r["greedy_val"] for r in rows])),
                                "initial_sampled_val_mean": float(np.mean([r["sampled_val"] for r in rows])),
                                "sft_final_loss_mean": float(np.mean([r["losses"][-1] for r in rows]))},
                       curves={f"sft_loss.seed{k}": r["losses"] for k, r in enumerate(rows)})


# ---------------------------------------------------------------- solve

@stage_task
def rl_run(params: Params, generated: Path, policy: Path, out: Path, setting: dict, method: str, k: int,
           device: str) -> dict:
    single_torch_thread()
    from .experiments import rl_run as run

    result = run(params, generated, policy, setting, method, derive_seed(params.seed, "rl", k), device)
    write_json(out, result | {"seed_index": k, "setting": setting})
    return {"label": out.stem, "best_val": result["best_val"], "test": result["test_at_best"],
            "median_step_s": float(np.median([s["wall_time_s"] for s in result["steps"]]))}


@flow(name="lambda_grpo-solve", task_runner=task_runner("process"))
def solve(params: Params, context: StageContext) -> StageReport:
    generated, policies = context.data("generate"), context.data("train")
    folder = context.out("solve")
    (folder / "runs").mkdir(parents=True)
    # seed-major, the two methods of a seed next to each other: they meet the same load (C4 times them)
    futures = [rl_run.submit(params, generated, policies / f"sft_policy_seed{k}",
                             folder / "runs" / f"{run_label(setting, method, k)}.json", setting, method, k,
                             context.device)
               for setting in rl_settings(params) for k in range(params.seeds) for method in ("grpo", "lambda_grpo")]
    rows = [f.result() for f in futures]
    write_json(folder / "summary.json", rows)
    return StageReport(metrics={f"{r['label']}.best_val": r["best_val"] for r in rows}
                       | {f"{r['label']}.test": r["test"] for r in rows})


# ---------------------------------------------------------------- evaluate

@flow(name="lambda_grpo-evaluate", task_runner=task_runner())
def evaluate(params: Params, context: StageContext) -> StageReport:
    generated, policies = context.data("generate"), context.data("train")
    runs = [json.loads(p.read_text()) for p in sorted((context.data("solve") / "runs").glob("*.json"))]
    sft = json.loads((policies / "sft.json").read_text())
    identity = c1_identity(params, generated, policies / "sft_policy_seed0")
    claims, summary = paper_claims(params, runs, sft, identity)
    headline = {k: summary[k] for k in ("grpo_peak", "lambda_grpo_peak",
                                                                   "grpo_test", "lambda_grpo_test")}
    write_json(context.out("summary.json"), summary)
    folder = context.out("plots")
    plots.accuracy_curves(runs, rl_settings(params)[0], folder / "greedy_val_accuracy.png", "greedy")
    plots.accuracy_curves(runs, rl_settings(params)[0], folder / "sampled_val_accuracy.png", "sampled")
    plots.lambda_histogram(runs, folder / "lambda_histogram.png")
    curves = {f"{method}.greedy_val": list(zip(summary["eval_steps"], summary["curves"][method]["greedy"]))
              for method in ("grpo", "lambda_grpo")}
    return StageReport(metrics=summary["flat"], curves=curves, claims=claims, headline=headline)


STAGES = {"generate": generate, "train": train, "solve": solve, "evaluate": evaluate}
