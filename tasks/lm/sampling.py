"""Completions of prompts with `transformers`' `generate`: seeded sampling or greedy decoding.

Prompts of different lengths are left-padded (generate derives position ids from the attention mask). The
sampling noise comes from `seed` alone (a forked global RNG), so two runs with the same policy and seed
draw the same completions, whatever ran before in the process.
"""
from __future__ import annotations

import torch
from transformers import GenerationConfig


def left_pad(prompts: list[list[int]], pad: int) -> tuple[torch.Tensor, torch.Tensor]:
    width = max(len(p) for p in prompts)
    ids = torch.full((len(prompts), width), pad, dtype=torch.long)
    attention = torch.zeros((len(prompts), width), dtype=torch.long)
    for i, p in enumerate(prompts):
        ids[i, width - len(p):] = torch.tensor(p)
        attention[i, width - len(p):] = 1
    return ids, attention


def cut_at_eos(row: list[int], eos: int, pad: int) -> list[int]:
    """A generated continuation up to and including its first EOS (all of it, less padding, when there is none)."""
    return row[:row.index(eos) + 1] if eos in row else [t for t in row if t != pad]


@torch.no_grad()
def generate_completions(model, prompts: list[list[int]], *, max_new_tokens: int, eos: int, pad: int,
                         n_per_prompt: int = 1, temperature: float = 1.0, greedy: bool = False,
                         seed: int = 0) -> list[list[int]]:
    """`n_per_prompt` completions of each prompt, prompt-major (row i * n_per_prompt + j), each cut at EOS.
    Pure ancestral sampling at `temperature` (top-k and top-p off), or greedy decoding."""
    if temperature <= 0 and not greedy:
        raise ValueError(f"temperature: must be > 0 for sampling, got {temperature!r}")
    ids, attention = left_pad([p for p in prompts for _ in range(n_per_prompt)], pad)
    config = GenerationConfig(do_sample=not greedy, temperature=temperature if not greedy else None,
                              top_k=None if greedy else 0, top_p=None if greedy else 1.0,
                              max_new_tokens=max_new_tokens, eos_token_id=eos, pad_token_id=pad)
    was_training = model.training
    model.eval()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        out = model.generate(input_ids=ids.to(model.device), attention_mask=attention.to(model.device),
                             generation_config=config)
    model.train(was_training)
    return [cut_at_eos(row, eos, pad) for row in out[:, ids.shape[1]:].tolist()]
