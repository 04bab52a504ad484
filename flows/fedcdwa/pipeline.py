"""FedCDWA: decoupled federated prototype distillation with hierarchical Wasserstein aggregation (ICML 2026).

Stages: generate (a Dirichlet label-skewed split of load_digits per (alpha, seed)), train (every method and
ablation per (alpha, seed) as one federated run of the in-process engine, on worker processes), evaluate
(means and seed intervals per method and alpha, claims C1-C3, communication bytes, plots).
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

from . import plots, summaries
from .claims import claims as paper_claims
from .params import Params
from .variants import run_name


def partition_name(alpha: float, clients: int, seed_index: int) -> str:
    return f"partition_a{alpha:g}_K{clients}_s{seed_index}.json"


def runs(params: Params) -> list[tuple[str, str | None, float, int]]:
    """(method, ablation, alpha, seed index) of every run: the methods at every alpha, the ablations at theirs."""
    plan = [(m, None, a, s) for a in params.alphas for s in range(params.seeds) for m in params.methods]
    return plan + [("fedcdwa", ab, params.ablation_alpha, s) for ab in params.ablations for s in range(params.seeds)]


# ---------------------------------------------------------------- generate

@flow(name="fedcdwa-generate", task_runner=task_runner())
def generate(params: Params, context: StageContext) -> StageReport:
    from .data import digits_federation, digits_partition, partition_summary

    folder = context.out("partitions")
    folder.mkdir(parents=True)
    metrics = {}
    for alpha in params.alphas:
        entropy, empty = [], []
        for s in range(params.seeds):
            partition = digits_partition(params.clients, alpha, derive_seed(params.seed, "split", s))
            summary = partition_summary(digits_federation(partition))
            write_json(folder / partition_name(alpha, params.clients, s), partition | {"summary": summary})
            entropy.append(summary["mean_entropy"])
            empty.append(summary["empty_clients"])
        metrics |= {f"a{alpha:g}.mean_label_entropy": float(np.mean(entropy)), f"a{alpha:g}.empty_clients": float(np.sum(empty))}
    return StageReport(metrics=metrics)


# ---------------------------------------------------------------- train

@stage_task
def federated_run(partition_path: Path, out_folder: Path, params: Params, method: str, ablation: str | None,
                  alpha: float, seed_index: int) -> dict:
    single_torch_thread()
    from .data import digits_federation
    from .engine import result_record, run_inprocess
    from .server import CDWAState

    federation = digits_federation(json.loads(partition_path.read_text()))
    result = run_inprocess(params.config(method, ablation), federation, derive_seed(params.seed, "run", seed_index))
    name = run_name(method, alpha, seed_index, ablation)
    record = result_record(result) | {"name": name, "ablation": ablation, "alpha": alpha, "seed_index": seed_index}
    write_json(out_folder / f"{name}.json", record)
    final = result.final
    arrays = {f"w.{k}": v for k, v in (final.weights or {}).items()}
    if isinstance(final, CDWAState):  # FedCDWA's final class statistics
        arrays |= {"mu": final.stats.mu, "sigma": final.stats.sigma, "support": final.stats.support,
                   "support_n": final.stats.support_n, "known": final.stats.known}
    np.savez(out_folder / f"{name}_final.npz", **arrays)
    return {"name": name, "global": result.global_accuracy, "personal": result.personal_accuracy,
            "wall_time_s": result.wall_time_s}


@flow(name="fedcdwa-train", task_runner=task_runner("process"))
def train(params: Params, context: StageContext) -> StageReport:
    partitions, folder = context.data("partitions"), context.out("runs")
    folder.mkdir(parents=True)
    futures = [federated_run.submit(partitions / partition_name(alpha, params.clients, s), folder, params, method,
                                    ablation, alpha, s)
               for method, ablation, alpha, s in runs(params)]
    rows = [f.result() for f in futures]
    metrics = {f"{r['name']}.{key}": r[key] for r in rows for key in ("global", "personal")}
    return StageReport(metrics=metrics | {"train_wall_time_s": float(sum(r["wall_time_s"] for r in rows))})


# ---------------------------------------------------------------- evaluate

@flow(name="fedcdwa-evaluate", task_runner=task_runner())
def evaluate(params: Params, context: StageContext) -> StageReport:
    records = [json.loads(p.read_text()) for p in sorted(context.data("runs").glob("*.json"))]
    table = summaries.summarize(records)
    claims = paper_claims(table, params.alphas, params.decide_claims, params.seed)
    smallest = min(params.alphas)
    headline = {f"{label}.{accuracy}_a{smallest:g}": summaries.value(table, label, smallest, f"{accuracy}_mean")
                for accuracy in ("global", "personal") for label in ("fedcdwa", "fedavg")}
    write_csv(context.out("summary.csv"), summaries.rows(table))
    folder = context.out("plots")
    plots.accuracy_vs_alpha(table, folder / "accuracy_vs_alpha.png")
    plots.rounds(records, "global_accuracy", smallest, folder / "global_accuracy_rounds.png")
    plots.rounds(records, "inter_class_ratio", smallest, folder / "inter_class_ratio_rounds.png")
    plots.bytes_per_round(table, folder / "bytes_per_round.png")
    curves = {f"{r['name']}.global_accuracy": r["history"]["global_accuracy"]
              for r in records if r["seed_index"] == 0 and "global_accuracy" in r["history"]}
    return StageReport(metrics=summaries.flat_metrics(table), curves=curves,
                       claims=claims, headline=headline)


STAGES = {"generate": generate, "train": train, "evaluate": evaluate}
