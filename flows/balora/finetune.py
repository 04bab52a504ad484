"""Testbed C's run: peft LoRA on the MLP linears of a frozen tiny GPT-2, trained with AdamW (constant lr,
weight decay 0.01, torch's default as in the paper) on random windows of a text; BaLoRA = the same run with every
LoRA pair balanced after every optimizer step (tasks.lowrank.peft_lora.balance_lora_).

method: "lora" (peft's LoRA, the baseline), "balora" (variant svd, the paper's), "balora_aligned" (diagnostic).
LoRA's scale s = lora_alpha / r = scale**2 (the authors' A_scaling parametrisation).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from tasks.lm.corpus import windows
from tasks.lm.pretrain import eval_loss, next_token_nll
from tasks.lowrank.peft_lora import balance_lora_

METHODS = {"lora": None, "balora": "svd", "balora_aligned": "aligned"}
GPT2_MLP = ["mlp.c_fc", "mlp.c_proj"]  # MLP-only targeting, as the paper's gate/up/down_proj


@dataclass(frozen=True)
class FinetuneSetting:
    method: str
    rank: int
    lr: float
    scale: float
    steps: int
    batch: int
    context: int
    eval_every: int


def lora_model(base, rank: int, scale: float, seed: int):
    """A peft LoRA model on `base` (frozen): lora_A random (seeded), lora_B zero, dropout 0."""
    from peft import LoraConfig, get_peft_model

    config = LoraConfig(r=rank, lora_alpha=rank * scale ** 2, lora_dropout=0.0, target_modules=GPT2_MLP,
                        fan_in_fan_out=True, bias="none")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return get_peft_model(base, config)


def finetune(base, train_ids: torch.Tensor, val_windows: torch.Tensor, setting: FinetuneSetting, seed: int) -> dict:
    """Fine-tune a LoRA on `base` (modified: pass a copy); eval loss at step 0 and every eval_every steps, the wall
    time of every step (the balancing included), the final model."""
    if setting.method not in METHODS:
        raise ValueError(f"method: must be one of {sorted(METHODS)}, got {setting.method!r}")
    variant = METHODS[setting.method]
    model = lora_model(base, setting.rank, setting.scale, seed)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=setting.lr)
    generator = torch.Generator().manual_seed(seed + 1)
    evals, step_times, train_losses = [(0, eval_loss(model, val_windows))], [], []
    model.train()
    for step in range(1, setting.steps + 1):
        batch = windows(train_ids, setting.context, setting.batch, generator)
        started = time.perf_counter()
        loss = next_token_nll(model, batch)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if variant is not None:
            balance_lora_(model, variant)
        step_times.append(time.perf_counter() - started)
        value = loss.item()
        train_losses.append(value if torch.isfinite(torch.tensor(value)) else float("inf"))
        if not torch.isfinite(loss):
            evals.append((step, float("inf")))
            break
        if step % setting.eval_every == 0 or step == setting.steps:
            evals.append((step, eval_loss(model, val_windows)))
    model.eval()
    return {"evals": evals, "step_times": step_times, "train_losses": train_losses, "model": model}
