"""C4's step times: LoRA and the BaLoRA variants stepping from copies of one model on the same batches, alternating
step by step in one process (the order rotating from step to step), so that all meet the same machine load (timings
of runs on different worker processes are not comparable on a shared machine); repeated from fresh copies with
other seeds, so that C4's interval sees the run-to-run spread."""
from __future__ import annotations

import copy
import time

import numpy as np
import torch

from tasks.lm.corpus import windows
from tasks.lm.pretrain import next_token_nll
from tasks.lowrank.peft_lora import balance_lora_

from .finetune import METHODS, lora_model

WARMUP = 2  # the first steps of each method are not timed


def alternating_step_times(base, ids: torch.Tensor, rank: int, steps: int, batch: int, context: int, seed: int,
                           device: str = "cpu", methods: tuple[str, ...] = ("lora", "balora")) -> dict:
    """Per method: the median wall time of an optimizer step (balancing included for BaLoRA) and of the projection
    alone; `ratio` is BaLoRA's (the paper's variant) over LoRA's, `ratios` every BaLoRA variant's, `projection_share`
    each variant's projection time over its step time (medians)."""
    models = {m: lora_model(copy.deepcopy(base), rank, 1.0, seed).to(device) for m in methods}
    optimizers = {m: torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
                  for m, model in models.items()}
    generator = torch.Generator().manual_seed(seed)
    times = {m: [] for m in methods}
    projection = {m: [] for m in methods if METHODS[m] is not None}
    for step in range(steps + WARMUP):
        batch_ids = windows(ids, context, batch, generator).to(device)
        for method in methods[step % len(methods):] + methods[: step % len(methods)]:
            started = time.perf_counter()
            loss = next_token_nll(models[method], batch_ids)
            optimizers[method].zero_grad(set_to_none=True)
            loss.backward()
            optimizers[method].step()
            if method in projection:
                projected = time.perf_counter()
                balance_lora_(models[method], METHODS[method])
                projection[method].append(time.perf_counter() - projected)
            if device == "cuda":
                torch.cuda.synchronize()
            if step >= WARMUP:
                times[method].append(time.perf_counter() - started)
    medians = {m: float(np.median(t)) for m, t in times.items()}
    projections = {m: float(np.median(t[WARMUP:])) for m, t in projection.items()}
    return {"median_step_s": medians, "ratio": medians["balora"] / medians["lora"],
            "ratios": {m: medians[m] / medians["lora"] for m in projection},
            "median_projection_s": projections["balora"], "median_projection_s_by_method": projections,
            "projection_share": {m: projections[m] / medians[m] for m in projection}, "steps": steps,
            "models": models}


def timing_repeats(base, ids: torch.Tensor, rank: int, setting, seeds: list[int],
                   methods: tuple[str, ...]) -> list[dict]:
    """One alternating timing run per seed (setting: TimingParams' batch and steps, its model's context)."""
    runs = []
    for seed in seeds:
        run = alternating_step_times(base, ids, rank, setting.steps, setting.batch, setting.model.context, seed,
                                     methods=methods)
        run.pop("models")
        runs.append(run | {"seed": seed})
    return runs
