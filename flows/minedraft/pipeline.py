"""MineDraft: batch-parallel speculative decoding (Tang et al., ICML 2026), a CPU reproduction.

Stages: generate (stdlib character corpus, benchmark prompts), train (tiny GPT-2 target and drafter, tasks.lm),
solve (the CPU topology; AR-1c, SD-1c, PSD-2c, SD-2c per k and repeat at temperature 1, SD-1c and PSD-2c bracketed by
calibrations of their step costs in their own workers, a host probe round before every repeat and after the last,
the GPU variants where the profile asks and CUDA is present, plus greedy runs), evaluate (C1-C3, plots). The spec's
separate calibrate stage is folded into solve: costs measured minutes apart at another load do not describe a run.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import torch
from prefect import flow

from flows.runtime import task_runner
from tasks.core.device import single_torch_thread
from tasks.core.io import write_json
from tasks.core.seeding import derive_seed
from tasks.core.stage import StageContext, StageReport
from tasks.lm.corpus import CHAR_VOCAB, stdlib_corpus
from tasks.lm.model import TinyLMConfig, build_model, load_model, num_parameters, save_model
from tasks.lm.pretrain import evaluate_nll, pretrain
from tasks.lm.training import TrainSetting

from . import calibrate as calib
from . import plots
from .claims import claims as paper_claims, sampler_check, summarize
from .experiments import CONFIGS, CORE_TARGET, Workers, run_bracketed, run_config, warm_up
from .gpu import GPU_CONFIGS, GpuWorkers, cuda_available
from .params import Params
from .prompts import line_windows

REFERENCES = ("AR-1c", "SD-2c")  # reported beside C2, no gate


# ---------------------------------------------------------------- generate

@flow(name="minedraft-generate", task_runner=task_runner())
def generate(params: Params, context: StageContext) -> StageReport:
    folder = context.out("generate")
    folder.mkdir(parents=True)
    corpus = stdlib_corpus(params.corpus_chars)
    torch.save({"train": corpus.train, "val": corpus.val}, folder / "corpus.pt")
    prompts = line_windows(corpus.val, params.prompts, params.prompt_len)
    longer = line_windows(corpus.val, params.batch, params.prompt_len + params.max_new // 2)
    write_json(folder / "prompts.json", {"prompts": prompts, "calibration_contexts": longer})
    write_json(folder / "manifest.json", corpus.manifest())
    return StageReport(metrics={"corpus_chars": corpus.n_chars, "train_chars": len(corpus.train),
                                "val_chars": len(corpus.val), "prompts": len(prompts)})


# ---------------------------------------------------------------- train

@torch.no_grad()
def agreement(target, drafter, ids: torch.Tensor, context: int, seed: int) -> dict:
    """Drafter vs target on validation windows: alpha = E sum_x min(p, q) (sampled acceptance at temperature 1) and
    the rate at which their argmaxes agree (greedy acceptance)."""
    generator = torch.Generator().manual_seed(seed)
    starts = torch.randint(0, len(ids) - context, (16,), generator=generator)
    batch = ids[starts[:, None] + torch.arange(context)]
    p, q = torch.softmax(target(input_ids=batch).logits, -1), torch.softmax(drafter(input_ids=batch).logits, -1)
    return {"alpha_sampled": float(torch.minimum(p, q).sum(-1).mean()),
            "alpha_greedy": float((p.argmax(-1) == q.argmax(-1)).float().mean())}


@flow(name="minedraft-train", task_runner=task_runner())
def train(params: Params, context: StageContext) -> StageReport:
    single_torch_thread()
    corpus = torch.load(context.data("generate", "corpus.pt"))
    folder = context.out("train")
    folder.mkdir(parents=True)
    setting = TrainSetting(params.train.steps, params.train.batch, params.train.lr, cosine=True)
    models, metrics, curves = {}, {}, {}
    for name in ("target", "drafter"):
        config = TinyLMConfig(**getattr(params, name).model_dump())
        model = build_model(config, CHAR_VOCAB, derive_seed(params.seed, name, "init"))
        losses = pretrain(model, corpus["train"], setting, config.context, derive_seed(params.seed, name, "batches"))
        save_model(model, folder / name, CHAR_VOCAB, config)
        models[name] = model
        curves[f"{name}.train_loss"] = losses
        metrics |= {f"{name}.params": num_parameters(model), f"{name}.train_loss": float(np.mean(losses[-10:])),
                    f"{name}.val_nll": evaluate_nll(model, corpus["val"], config.context, 4, 16, params.seed)}
    metrics |= {f"drafter.{key}": value for key, value in
                agreement(models["target"], models["drafter"], corpus["val"], params.target.context, params.seed).items()}
    write_json(folder / "train.json", metrics)
    return StageReport(metrics=metrics, curves=curves)


# ---------------------------------------------------------------- solve

@flow(name="minedraft-solve", task_runner=task_runner())
def solve(params: Params, context: StageContext) -> StageReport:
    models, folder = context.data("train"), context.out("solve")
    folder.mkdir(parents=True)
    generated = json.loads(context.data("generate", "prompts.json").read_text())
    prompts, contexts = generated["prompts"], generated["calibration_contexts"]
    base = dict(max_new=params.max_new, batch=params.batch)
    runs, greedy, probes = [], [], []
    workers = Workers.start(str(models / "target"), str(models / "drafter"))
    try:
        gpu_note = start_gpu(workers, params, models)
        configs = CONFIGS + (GPU_CONFIGS if workers.gpu else ())
        warm_up(workers, prompts, params.ks[0], params.temperature, configs)
        for rep in range(params.repeats):
            probes.append(probe_round(workers, params))
            seed = derive_seed(params.seed, "decode", rep)
            order = [configs[(i + rep) % len(configs)] for i in range(len(configs))]  # spread the load drift
            for config in order:
                for k in draft_lengths(params, config, rep):
                    runs.append(run_bracketed(workers, config, prompts, contexts, k=k, temperature=params.temperature,
                                              seed=seed, calibrate_repeats=params.calibrate_repeats, **base)
                                | {"repeat": rep})
        probes.append(probe_round(workers, params))
        seed = derive_seed(params.seed, "decode", "greedy")
        greedy.append(run_config(workers, "AR-1c", prompts, k=1, temperature=0.0, seed=seed, **base))
        for k in params.ks:
            for config in ("SD-1c", "PSD-2c"):
                greedy.append(run_config(workers, config, prompts, k=k, temperature=0.0, seed=seed, **base))
        info = workers.info()
    finally:
        workers.close()
    write_json(folder / "runs.json", {"runs": runs, "probes": probes, "gpu": gpu_note, "workers": info,
                                      "topology": calib.cpu_topology(), "prompts": len(prompts)})
    write_json(folder / "greedy.json", {"runs": greedy, "near_ties": near_ties(models / "target", prompts, greedy)})
    summary = summarize(runs)
    return StageReport(metrics={f"{c}.k{k}.{m}": row[m] for (c, k), row in summary.items()
                                for m in ("throughput", "latency_s", "vsr")}
                       | {"load_average": os.getloadavg()[0],
                          "probe.efficiency_median": float(np.median([p["efficiency"] for p in probes]))})


def draft_lengths(params: Params, config: str, repeat: int) -> list[int]:
    """The ks `config` runs at in this repeat: none for a reference past its repeats, one for AR-1c (k unused)."""
    if config in REFERENCES and repeat >= params.reference_repeats:
        return []
    if config == "AR-1c":
        return params.ks[:1]
    if config == "SD-2c" and params.control_ks:
        return params.control_ks
    return params.ks


def start_gpu(workers: Workers, params: Params, models: Path) -> str:
    """The GPU variants' workers where the profile asks for them and CUDA is present; else why they do not run."""
    if not params.gpu_variants:
        return "not in this profile"
    if not cuda_available():
        return "not run: no CUDA device on this machine"
    workers.gpu = GpuWorkers.start(CORE_TARGET, str(models / "target"), str(models / "drafter"))
    return ""


def probe_round(workers: Workers, params: Params) -> dict:
    """The host probe in the run's own two workers (PSD's target and drafter cores): a fixed CPU-bound workload on
    each alone, then on both at once."""
    return calib.parallel_efficiency([workers.main, workers.drafter], params.probe.size, params.probe.repeats)


def near_ties(target_folder: Path, prompts: list[list[int]], greedy: list[dict]) -> list[dict]:
    """Every greedy SD/PSD output that differs from AR's: where, and the target's top-2 logit gap there (on AR's
    context), so C1 can tell a near-tie from an error."""
    ar = greedy[0]["outputs"]
    target = None
    found = []
    for run in greedy[1:]:
        for i, (mine, ref) in enumerate(zip(run["outputs"], ar)):
            if mine == ref:
                continue
            if target is None:
                target = load_model(target_folder)[0]
            at = next(j for j, (a, b) in enumerate(zip(mine, ref)) if a != b)
            with torch.no_grad():
                logits = target(input_ids=torch.tensor([prompts[i] + ref[:at]])).logits[0, -1]
            top = torch.topk(logits, 2).values
            found.append({"config": run["config"], "k": run["k"], "request": i, "position": at,
                          "top2_gap": float(top[0] - top[1])})
    return found


# ---------------------------------------------------------------- evaluate

@flow(name="minedraft-evaluate", task_runner=task_runner())
def evaluate(params: Params, context: StageContext) -> StageReport:
    solved = json.loads(context.data("solve", "runs.json").read_text())
    greedy = json.loads(context.data("solve", "greedy.json").read_text())
    sampler = sampler_check(params.sampler_draws, derive_seed(params.seed, "sampler"))
    claims, tables = paper_claims(solved, greedy, sampler, params)
    tables |= {"topology": solved["topology"]}
    headline = {"probe_efficiency": tables["host"]["efficiency"], "load_average": tables["load_average"]}
    write_json(context.out("summary.json"), tables)
    folder = context.out("plots")
    plots.by_k(tables["summary"], "throughput", "tokens / s", folder / "throughput.png")
    plots.by_k(tables["summary"], "latency_s", "decode wall / request (s)", folder / "latency.png")
    plots.speedup(tables["model"], folder / "speedup_model.png")
    return StageReport(metrics={k: v for k, v in tables["flat"].items()},
                       claims=claims, headline=headline)


STAGES = {"generate": generate, "train": train, "solve": solve, "evaluate": evaluate}
