"""Supervised fine-tuning of a causal LM on (prompt, completion) pairs, the loss on completion tokens only."""
from __future__ import annotations

import torch

from .sequences import completion_nll, pack
from .training import TrainSetting, train_steps


def train_sft(model, prompts: list[list[int]], completions: list[list[int]], setting: TrainSetting, seed: int,
              pad: int) -> list[float]:
    """AdamW on mini-batches drawn with replacement (from `seed` alone); returns the loss of every step."""
    if len(prompts) != len(completions) or not prompts:
        raise ValueError(f"prompts, completions: need the same non-zero number of rows, got {len(prompts)}, {len(completions)}")

    def batch_loss(generator: torch.Generator) -> torch.Tensor:
        rows = torch.randint(0, len(prompts), (setting.batch,), generator=generator).tolist()
        return completion_nll(model, pack([prompts[i] for i in rows], [completions[i] for i in rows], pad))

    return train_steps(model, setting, batch_loss, seed)
