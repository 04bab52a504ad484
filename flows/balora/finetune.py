"""Testbed C's run: peft LoRA on the MLP linears of a frozen tiny GPT-2, trained with AdamW (constant lr,
weight decay 0.01, torch's default as in the paper) on random windows of a text; BaLoRA = the same run with every
LoRA pair balanced after every optimizer step (tasks.lowrank.peft_lora.balance_lora_).

method: "lora" (peft's LoRA, the baseline), "balora" (variant svd, the paper's, singular pairs signed to agree with
the current pair), "balora_aligned" (the Procrustes variant), "balora_lapack" (variant svd with LAPACK's signs: the
authors' callback, kept to measure how often it re-bases the factors).
LoRA's scale s = lora_alpha / r = scale**2 (the authors' A_scaling parametrisation). A run evaluates on the
validation windows (the grid point is chosen on them) and, when given, on the test windows (the numbers reported).
"""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

import torch

from tasks.lm.corpus import windows
from tasks.lm.pretrain import eval_loss, next_token_nll
from tasks.lowrank.peft_lora import balance_lora_, lora_factor_pairs

METHODS = {"lora": None, "balora": "svd", "balora_aligned": "aligned", "balora_lapack": "svd_lapack"}
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


def left_factors(model) -> list[torch.Tensor]:
    """Copies of every LoRA pair's left factor (the paper's A = peft's lora_B)."""
    return [left.detach().clone() for _, _, left, _ in lora_factor_pairs(model)]


def relative_changes(before: list[torch.Tensor], model) -> list[float]:
    """||A' - A||_F / ||A||_F per pair of a projection (pairs with A = 0, skipped by the projection, left out):
    about 0 when the projection keeps the pair's basis, up to 2 when it flips or reorders columns."""
    return [float(torch.linalg.norm(left.detach() - old) / torch.linalg.norm(old))
            for old, (_, _, left, _) in zip(before, lora_factor_pairs(model)) if old.any()]


def finetune(base, train_ids: torch.Tensor, val_windows: torch.Tensor, setting: FinetuneSetting, seed: int,
             test_windows: torch.Tensor | None = None) -> dict:
    """Fine-tune a LoRA on `base` (modified: pass a copy); eval loss on the validation (and test) windows at step 0
    and every eval_every steps, the wall time of every step (the balancing included), the median relative change of
    the left factors per projection (BaLoRA), the final model."""
    if setting.method not in METHODS:
        raise ValueError(f"method: must be one of {sorted(METHODS)}, got {setting.method!r}")
    variant = METHODS[setting.method]
    model = lora_model(base, setting.rank, setting.scale, seed)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=setting.lr)
    generator = torch.Generator().manual_seed(seed + 1)
    eval_sets = {"evals": val_windows} | ({} if test_windows is None else {"test_evals": test_windows})
    evals = {key: [(0, eval_loss(model, split))] for key, split in eval_sets.items()}
    step_times, train_losses, changes = [], [], []
    model.train()
    for step in range(1, setting.steps + 1):
        batch = windows(train_ids, setting.context, setting.batch, generator)
        started = time.perf_counter()
        loss = next_token_nll(model, batch)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        elapsed = time.perf_counter() - started
        if variant is not None:
            before = left_factors(model)  # not timed: the measurement is no part of the method
            projected = time.perf_counter()
            balance_lora_(model, variant)
            elapsed += time.perf_counter() - projected
            changes += relative_changes(before, model)
        step_times.append(elapsed)
        value = loss.item()
        train_losses.append(value if torch.isfinite(torch.tensor(value)) else float("inf"))
        if not torch.isfinite(loss):
            for curve in evals.values():
                curve.append((step, float("inf")))
            break
        if step % setting.eval_every == 0 or step == setting.steps:
            for key, split in eval_sets.items():
                evals[key].append((step, eval_loss(model, split)))
    model.eval()
    return evals | {"step_times": step_times, "train_losses": train_losses, "model": model,
                    "left_change_median": statistics.median(changes) if changes else None}
