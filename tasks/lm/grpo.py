"""GRPO (Shao et al. 2024) as the authors' trainers and TRL compute it: group-normalised outcome advantages and
the clipped policy-gradient loss with an optional k3 KL term, per-token weights and two aggregations.

Per token (rho = pi_theta / pi_old of the sampled token):
    l_{i,t} = -[min(rho A_i, clip(rho, 1-eps, 1+eps) A_i) - beta KL_{i,t}] * w_{i,t},
    KL_{i,t} = exp(ref - logp) - (ref - logp) - 1.
Aggregation "sequence" (TRL's "grpo"): mean over completions of (sum_t l / |o_i|); "token" (TRL's "dapo"):
sum of l over every completion token / their number. The divisor is the token count, never the sum of w.
"""
from __future__ import annotations

from typing import Literal

import torch

AGGREGATIONS = ("sequence", "token")
ADVANTAGE_EPS = 1e-4


def group_advantages(rewards: torch.Tensor, eps: float = ADVANTAGE_EPS) -> torch.Tensor:
    """[groups, G] rewards -> (r - mean) / (unbiased std + eps) within each group; a constant group gives 0."""
    if rewards.ndim != 2 or rewards.shape[1] < 2:
        raise ValueError(f"rewards: need shape [groups, G >= 2], got {tuple(rewards.shape)}")
    return (rewards - rewards.mean(1, keepdim=True)) / (rewards.std(1, unbiased=True, keepdim=True) + eps)


def policy_loss(logp: torch.Tensor, advantages: torch.Tensor, mask: torch.Tensor, *,
                aggregation: Literal["sequence", "token"] = "sequence", weights: torch.Tensor | None = None,
                old_logp: torch.Tensor | None = None, eps_clip: float = 0.2, beta: float = 0.0,
                ref_logp: torch.Tensor | None = None) -> torch.Tensor:
    """The loss of a batch of completions: logp, mask, weights, old_logp, ref_logp are [N, L]; advantages [N].

    old_logp None means one pass per sampled batch (mu = 1): pi_old = pi_theta detached, so rho = 1 and the
    gradient is that of A * log pi."""
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"aggregation: must be one of {AGGREGATIONS}, got {aggregation!r}")
    if beta != 0.0 and ref_logp is None:
        raise ValueError("ref_logp: needed when beta != 0")
    mask = mask.to(device=logp.device, dtype=logp.dtype)
    ratio = torch.exp(logp - (logp.detach() if old_logp is None else old_logp))
    A = advantages[:, None].to(device=logp.device, dtype=logp.dtype)
    per_token = -torch.min(ratio * A, ratio.clamp(1 - eps_clip, 1 + eps_clip) * A)
    if beta != 0.0:
        per_token = per_token + beta * (torch.exp(ref_logp - logp) - (ref_logp - logp) - 1)
    if weights is not None:
        per_token = per_token * weights.to(device=logp.device, dtype=logp.dtype)
    if aggregation == "sequence":
        return ((per_token * mask).sum(1) / mask.sum(1).clamp(min=1.0)).mean()
    return (per_token * mask).sum() / mask.sum().clamp(min=1.0)
