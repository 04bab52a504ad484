"""Supervised fine-tuning of a causal LM on (prompt, completion) pairs, the loss on completion tokens only."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from .sequences import completion_nll, pack


@dataclass(frozen=True)
class SFTSetting:
    steps: int
    batch: int
    lr: float = 3e-3
    weight_decay: float = 0.01


def train_sft(model, prompts: list[list[int]], completions: list[list[int]], setting: SFTSetting, seed: int,
              pad: int) -> list[float]:
    """AdamW on mini-batches drawn with replacement (from `seed` alone); returns the loss of every step."""
    if len(prompts) != len(completions) or not prompts:
        raise ValueError(f"prompts, completions: need the same non-zero number of rows, got {len(prompts)}, {len(completions)}")
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=setting.lr, weight_decay=setting.weight_decay)
    model.train()
    losses = []
    for _ in range(setting.steps):
        rows = torch.randint(0, len(prompts), (setting.batch,), generator=generator).tolist()
        loss = completion_nll(model, pack([prompts[i] for i in rows], [completions[i] for i in rows], pad))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    model.eval()
    return losses
