"""C4's step times: LoRA and BaLoRA stepping from copies of one model on the same batches, alternating step by step
in one process, so that both meet the same machine load (timings of runs on different worker processes are not
comparable on a shared machine)."""
from __future__ import annotations

import copy
import time

import numpy as np
import torch

from tasks.lm.corpus import windows
from tasks.lm.pretrain import next_token_nll
from tasks.lowrank.peft_lora import balance_lora_

from .finetune import lora_model

WARMUP = 2  # the first steps of each method are not timed


def alternating_step_times(base, ids: torch.Tensor, rank: int, steps: int, batch: int, context: int, seed: int,
                           device: str = "cpu") -> dict:
    """Per method ("lora", "balora"): wall time of each optimizer step (balancing included for BaLoRA), and the time
    of the projection alone."""
    models = {m: lora_model(copy.deepcopy(base), rank, 1.0, seed).to(device) for m in ("lora", "balora")}
    optimizers = {m: torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
                  for m, model in models.items()}
    generator = torch.Generator().manual_seed(seed)
    times, projection = {m: [] for m in models}, []
    for step in range(steps + WARMUP):
        batch_ids = windows(ids, context, batch, generator).to(device)
        for method in (("lora", "balora") if step % 2 else ("balora", "lora")):
            started = time.perf_counter()
            loss = next_token_nll(models[method], batch_ids)
            optimizers[method].zero_grad(set_to_none=True)
            loss.backward()
            optimizers[method].step()
            if method == "balora":
                projected = time.perf_counter()
                balance_lora_(models[method])
                projection.append(time.perf_counter() - projected)
            if device == "cuda":
                torch.cuda.synchronize()
            if step >= WARMUP:
                times[method].append(time.perf_counter() - started)
    medians = {m: float(np.median(t)) for m, t in times.items()}
    return {"median_step_s": medians, "ratio": medians["balora"] / medians["lora"],
            "median_projection_s": float(np.median(projection[WARMUP:])), "steps": steps, "models": models}
