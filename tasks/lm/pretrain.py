"""Causal-LM training on a stream of token ids (random windows, next-token loss) and its evaluation.

sft.py trains on (prompt, completion) pairs; this is the plain next-token objective on a corpus, for pre-training
a tiny base model (MineDraft's target and drafter, BaLoRA's base) and for fine-tuning it on other text.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from .corpus import windows
from .training import TrainSetting, train_steps


def next_token_nll(model, batch: torch.Tensor) -> torch.Tensor:
    """Mean next-token negative log-likelihood (nats per token) of [batch, T] ids."""
    logits = model(input_ids=batch[:, :-1]).logits
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch[:, 1:].reshape(-1))


def pretrain(model, ids: torch.Tensor, setting: TrainSetting, context: int, seed: int) -> list[float]:
    """AdamW on `setting.batch` random windows of `context` ids per step (drawn from `seed` alone); returns every
    step's loss."""
    return train_steps(model, setting, lambda generator: next_token_nll(model, windows(ids, context, setting.batch, generator)),
                       seed)


@torch.no_grad()
def evaluate_nll(model, ids: torch.Tensor, context: int, batches: int, batch: int, seed: int) -> float:
    """Mean next-token loss over `batches` random windows (a fixed draw from `seed`)."""
    generator = torch.Generator().manual_seed(seed)
    return float(sum(next_token_nll(model, windows(ids, context, batch, generator)) for _ in range(batches)) / batches)


def fixed_windows(ids: torch.Tensor, context: int, count: int, seed: int) -> torch.Tensor:
    """`count` windows at starts drawn from `seed` alone: a fixed validation set."""
    return windows(ids, context, count, torch.Generator().manual_seed(seed))


@torch.no_grad()
def eval_loss(model, batch: torch.Tensor, chunk: int = 32) -> float:
    """next_token_nll over fixed windows, in chunks (eval mode, no grad); the model's mode is restored."""
    was_training = model.training
    model.eval()
    total = sum(next_token_nll(model, part).item() * len(part) for part in batch.split(chunk))
    model.train(was_training)
    return total / len(batch)
