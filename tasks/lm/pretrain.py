"""Causal-LM pre-training on a token stream (random windows, next-token loss): AdamW with a cosine schedule."""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from .corpus import windows


@dataclass(frozen=True)
class PretrainSetting:
    steps: int
    batch: int
    lr: float = 3e-3
    weight_decay: float = 0.01


def next_token_nll(model, batch: torch.Tensor) -> torch.Tensor:
    """Mean next-token negative log-likelihood (nats per token) of [batch, T] ids."""
    logits = model(input_ids=batch[:, :-1]).logits
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch[:, 1:].reshape(-1))


def pretrain(model, ids: torch.Tensor, setting: PretrainSetting, context: int, seed: int) -> list[float]:
    """AdamW on `setting.batch` random windows of `context` ids per step (drawn from `seed` alone), learning rate
    on a cosine from `lr` to 0; returns every step's loss."""
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=setting.lr, weight_decay=setting.weight_decay)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: 0.5 * (1 + math.cos(math.pi * step / setting.steps)))
    model.train()
    losses = []
    for _ in range(setting.steps):
        loss = next_token_nll(model, windows(ids, context, setting.batch, generator))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        schedule.step()
        losses.append(loss.item())
    model.eval()
    return losses


@torch.no_grad()
def evaluate_nll(model, ids: torch.Tensor, context: int, batches: int, batch: int, seed: int) -> float:
    """Mean next-token loss over `batches` random windows (a fixed draw from `seed`)."""
    generator = torch.Generator().manual_seed(seed)
    return float(sum(next_token_nll(model, windows(ids, context, batch, generator)) for _ in range(batches)) / batches)
