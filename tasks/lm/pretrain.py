"""Causal-LM training on a stream of token ids (random windows), and the mean loss on fixed windows.

sft.py trains on (prompt, completion) pairs; this is the plain next-token objective on a corpus, for pre-training
a tiny base model and for fine-tuning it on other text.
"""
from __future__ import annotations

import torch

from .corpus import windows


def window_loss(model, batch: torch.Tensor) -> torch.Tensor:
    """Mean next-token cross-entropy of the windows [n, context] (every position predicts the next id)."""
    logits = model(input_ids=batch).logits[:, :-1]
    return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch[:, 1:].reshape(-1))


@torch.no_grad()
def eval_loss(model, batch: torch.Tensor, chunk: int = 32) -> float:
    """window_loss over fixed windows, in chunks (eval mode, no grad); the model's mode is restored."""
    was_training = model.training
    model.eval()
    total = sum(window_loss(model, part).item() * len(part) for part in batch.split(chunk))
    model.train(was_training)
    return total / len(batch)


def fixed_windows(ids: torch.Tensor, context: int, count: int, seed: int) -> torch.Tensor:
    """`count` windows at starts drawn from `seed` alone: a fixed validation set."""
    return windows(ids, context, count, torch.Generator().manual_seed(seed))


def pretrain(model, ids: torch.Tensor, context: int, batch: int, steps: int, lr: float, seed: int,
             weight_decay: float = 0.01) -> list[float]:
    """AdamW on `steps` batches of random windows (drawn from `seed` alone); the loss of every step."""
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    model.train()
    losses = []
    for _ in range(steps):
        loss = window_loss(model, windows(ids, context, batch, generator))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    model.eval()
    return losses
