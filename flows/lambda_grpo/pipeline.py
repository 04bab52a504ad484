"""lambda-GRPO: GRPO is secretly a process reward model (Sullivan, Koller; ICML 2026).

Stages: generate (chain-arithmetic tune / validation / test prompts and noisy-teacher SFT traces, per family), train
(one SFT policy per seed and family, a tiny GPT-2 from tasks.lm), tune (the RL learning-rate sweep: both methods
from the seed-0 SFT policy of the first family, scored on the tune prompts), solve (RL from each SFT policy with
GRPO and lambda-GRPO at the chosen learning rate, same seeds, per RL setting and family; worker processes),
evaluate (C1 gradient identity on the seed-0 SFT policy, the precondition, C2-C5 from the curves, plots).

The second family (params `second`) lives in a `second/` folder inside each stage's output.
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
from .experiments import (SECOND, c1_identity, chosen_lr, constant_answer, family_params, rl_settings, run_label,
                          save_problems, sft_policy, sft_traces)
from .params import Params

METHODS = ("grpo", "lambda_grpo")


def families(params: Params) -> dict[str, Params]:
    """Folder name ("" for the first family) -> the family's params."""
    return {"": params} | ({SECOND: family_params(params)} if params.second is not None else {})


def prefixed(family: str, name: str) -> str:
    return f"{family}.{name}" if family else name


# ---------------------------------------------------------------- generate

@flow(name="lambda_grpo-generate", task_runner=task_runner())
def generate(params: Params, context: StageContext) -> StageReport:
    metrics = {}
    for family, own in families(params).items():
        folder = context.out("generate") / family
        folder.mkdir(parents=True)
        sizes = save_problems(own, folder) | {"sft_noisy_fraction": sft_traces(own, folder / "sft_traces.jsonl")}
        metrics |= {prefixed(family, k): v for k, v in sizes.items()}
    return StageReport(metrics=metrics)


# ---------------------------------------------------------------- train

@stage_task
def train_seed(params: Params, generated: Path, out: Path, k: int, device: str) -> dict:
    single_torch_thread()
    return sft_policy(params, generated, out, derive_seed(params.seed, "sft", k), device)


@flow(name="lambda_grpo-train", task_runner=task_runner("process"))
def train(params: Params, context: StageContext) -> StageReport:
    futures = {}
    for family, own in families(params).items():
        folder = context.out("train") / family
        folder.mkdir(parents=True)
        futures[family] = [train_seed.submit(own, context.data("generate") / family, folder / f"sft_policy_seed{k}", k,
                                             context.device) for k in range(params.seeds)]
    metrics, curves = {}, {}
    for family, pending in futures.items():
        rows = [f.result() for f in pending]
        write_json(context.out("train") / family / "sft.json", rows)
        metrics |= {prefixed(family, "initial_greedy_val_mean"): float(np.mean([r["greedy_val"] for r in rows])),
                    prefixed(family, "initial_sampled_val_mean"): float(np.mean([r["sampled_val"] for r in rows])),
                    prefixed(family, "sft_final_loss_mean"): float(np.mean([r["losses"][-1] for r in rows]))}
        curves |= {prefixed(family, f"sft_loss.seed{k}"): r["losses"] for k, r in enumerate(rows)}
    return StageReport(metrics=metrics, curves=curves)


# ---------------------------------------------------------------- tune

@stage_task
def tune_run(params: Params, generated: Path, policy: Path, out: Path, lr: float, method: str, device: str) -> dict:
    single_torch_thread()
    from .experiments import tune_run as run

    result = run(params, generated, policy, lr, method, device)
    write_json(out, result)
    return result


@flow(name="lambda_grpo-tune", task_runner=task_runner("process"))
def tune(params: Params, context: StageContext) -> StageReport:
    """The learning-rate sweep on the first family; the second family runs at the same rate."""
    folder = context.out("tune")
    (folder / "runs").mkdir(parents=True)
    futures = [tune_run.submit(params, context.data("generate"), context.data("train") / "sft_policy_seed0",
                               folder / "runs" / f"{method}_lr{lr:g}.json", lr, method, context.device)
               for lr in params.rl.lr_grid for method in METHODS]
    lr, scores = chosen_lr([f.result() for f in futures])
    write_json(folder / "choice.json", {"lr": lr, "scores": {f"{k:g}": v for k, v in scores.items()}})
    return StageReport(metrics={"chosen_lr": lr} | {f"tune_score.lr{k:g}": v for k, v in scores.items()})


def read_choice(tuned: Path) -> dict:
    return json.loads((tuned / "choice.json").read_text())


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
    lr = read_choice(context.data("tune"))["lr"]
    futures = []
    for family, own in families(params).items():
        generated, policies, runs = (context.data("generate") / family, context.data("train") / family,
                                     context.out("solve") / family / "runs")
        runs.mkdir(parents=True)
        # seed-major, the two methods of a seed next to each other: they meet the same load (C4 times them)
        futures += [(family, rl_run.submit(own, generated, policies / f"sft_policy_seed{k}",
                                           runs / f"{run_label(setting, method, k)}.json", setting, method, k,
                                           context.device))
                    for setting in rl_settings(params, lr) for k in range(params.seeds) for method in METHODS]
    rows = [(family, f.result()) for family, f in futures]
    write_json(context.out("solve") / "summary.json", [row | {"family": family or "first"} for family, row in rows])
    return StageReport(metrics={prefixed(family, f"{r['label']}.best_val"): r["best_val"] for family, r in rows}
                       | {prefixed(family, f"{r['label']}.test"): r["test"] for family, r in rows})


# ---------------------------------------------------------------- evaluate

def family_inputs(context: StageContext, family: str) -> dict:
    """A family's RL runs, SFT rows and constant-answer baseline, as claims() takes them."""
    runs = [json.loads(p.read_text()) for p in sorted((context.data("solve") / family / "runs").glob("*.json"))]
    sft = json.loads((context.data("train") / family / "sft.json").read_text())
    return {"runs": runs, "sft": sft, "constant": constant_answer(context.data("generate") / family)}


@flow(name="lambda_grpo-evaluate", task_runner=task_runner())
def evaluate(params: Params, context: StageContext) -> StageReport:
    identity = c1_identity(params, context.data("generate"), context.data("train") / "sft_policy_seed0")
    first = family_inputs(context, "")
    second = family_inputs(context, SECOND) if params.second is not None else None
    sweep = read_choice(context.data("tune"))
    claims, summary = paper_claims(params, first, identity, sweep, second)
    headline = {k: summary[k] for k in ("grpo_peak", "lambda_grpo_peak", "grpo_test", "lambda_grpo_test")}
    write_json(context.out("summary.json"), summary)
    folder = context.out("plots")
    primary = rl_settings(params, sweep["lr"])[0]
    for family, inputs in (("", first), (SECOND, second)):
        if inputs is None:
            continue
        stem = prefixed(family, "")
        plots.accuracy_curves(inputs["runs"], primary, folder / f"{stem}greedy_val_accuracy.png", "greedy")
        plots.accuracy_curves(inputs["runs"], primary, folder / f"{stem}sampled_val_accuracy.png", "sampled")
        plots.lambda_histogram(inputs["runs"], folder / f"{stem}lambda_histogram.png")
    curves = {f"{method}.greedy_val": list(zip(summary["eval_steps"], summary["curves"][method]["greedy"]))
              for method in METHODS}
    return StageReport(metrics=summary["flat"] | {"chosen_lr": sweep["lr"]}, curves=curves, claims=claims,
                       headline=headline)


STAGES = {"generate": generate, "train": train, "tune": tune, "solve": solve, "evaluate": evaluate}
