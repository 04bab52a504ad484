"""Prompt + completion batches and the per-token log-probabilities of the completions.

Rows are right-padded (prompt, then completion, then PAD), so positions start at 0 in every row and a
causal model needs no position ids. Log-probs come back aligned to the completion: column t is token t of
each completion, `mask` marks the real ones.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F


@dataclass
class PackedBatch:
    input_ids: torch.Tensor  # [N, T] prompt + completion + PAD
    attention_mask: torch.Tensor  # [N, T] 1 on prompt and completion tokens
    prompt_lengths: torch.Tensor  # [N]
    completion_ids: torch.Tensor  # [N, L] completions, PAD after their end
    mask: torch.Tensor  # [N, L] 1 on completion tokens


def pack(prompts: list[list[int]], completions: list[list[int]], pad: int) -> PackedBatch:
    if len(prompts) != len(completions):
        raise ValueError(f"prompts and completions: {len(prompts)} != {len(completions)} rows")
    n, width = len(prompts), max(len(p) + len(c) for p, c in zip(prompts, completions))
    longest = max(len(c) for c in completions)
    input_ids = torch.full((n, width), pad, dtype=torch.long)
    attention = torch.zeros((n, width), dtype=torch.long)
    completion_ids = torch.full((n, longest), pad, dtype=torch.long)
    mask = torch.zeros((n, longest))
    for i, (p, c) in enumerate(zip(prompts, completions)):
        row = p + c
        input_ids[i, :len(row)] = torch.tensor(row)
        attention[i, :len(row)] = 1
        completion_ids[i, :len(c)] = torch.tensor(c, dtype=torch.long)
        mask[i, :len(c)] = 1.0
    return PackedBatch(input_ids, attention, torch.tensor([len(p) for p in prompts]), completion_ids, mask)


def completion_logprobs(model, batch: PackedBatch) -> torch.Tensor:
    """[N, L] log pi(completion token t | prompt, earlier tokens) at temperature 1 (0 where mask is 0)."""
    device = model.device
    logits = model(input_ids=batch.input_ids.to(device), attention_mask=batch.attention_mask.to(device),
                   use_cache=False).logits
    L = batch.completion_ids.shape[1]
    # the logit that predicts completion token t sits at position prompt_length + t - 1
    positions = (batch.prompt_lengths[:, None] + torch.arange(L) - 1).clamp(max=logits.shape[1] - 1).to(device)
    rows = torch.arange(len(positions), device=device)[:, None]
    tokens = batch.completion_ids.to(device)[..., None]
    logp = F.log_softmax(logits[rows, positions], dim=-1).gather(-1, tokens)[..., 0]
    return logp * batch.mask.to(device=device, dtype=logp.dtype)


def completion_nll(model, batch: PackedBatch) -> torch.Tensor:
    """Mean cross-entropy over the completion tokens of the batch (SFT's loss)."""
    logp = completion_logprobs(model, batch)
    return -logp.sum() / batch.mask.sum().to(logp.device)
