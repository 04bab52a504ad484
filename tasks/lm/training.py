"""The AdamW loop every tiny-LM training run shares (corpus pre-training, SFT): one batch loss per step, drawn
from a generator seeded by `seed` alone, an optional cosine learning-rate schedule; returns every step's loss."""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class TrainSetting:
    steps: int
    batch: int
    lr: float = 3e-3
    weight_decay: float = 0.01
    cosine: bool = False  # learning rate on a cosine from lr to 0; else constant


def train_steps(model, setting: TrainSetting, batch_loss: Callable[[torch.Generator], torch.Tensor],
                seed: int) -> list[float]:
    """`setting.steps` AdamW steps on batch_loss(generator) (the model in train mode, back in eval mode after)."""
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=setting.lr, weight_decay=setting.weight_decay)
    schedule = (torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 0.5 * (1 + math.cos(math.pi * step / setting.steps)))
                if setting.cosine else None)
    model.train()
    losses = []
    for _ in range(setting.steps):
        loss = batch_loss(generator)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if schedule is not None:
            schedule.step()
        losses.append(loss.item())
    model.eval()
    return losses
