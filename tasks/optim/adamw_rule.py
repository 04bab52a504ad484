"""The AdamW update as a pure in-place rule on one tensor (torch.optim.AdamW's arithmetic).

Muon-family optimizers hand their non-matrix parameters (embeddings, head, biases, norms) to this
rule, so one optimizer object steps the whole model with the same closure.
"""
from __future__ import annotations

import math

import torch


def adamw_update(param: torch.Tensor, grad: torch.Tensor, state: dict, *, lr: float, betas: tuple[float, float],
                 eps: float, weight_decay: float) -> None:
    """One AdamW step on `param` in place; `state` (empty on the first call) holds step, exp_avg, exp_avg_sq.

    Decoupled weight decay (theta *= 1 - lr * wd) before the moment update; bias-corrected moments;
    epsilon added to sqrt(v_hat), as torch.optim.AdamW does.
    """
    beta1, beta2 = betas
    if not state:
        state["step"] = 0
        state["exp_avg"] = torch.zeros_like(param)
        state["exp_avg_sq"] = torch.zeros_like(param)
    state["step"] += 1
    step = state["step"]
    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]

    param.mul_(1 - lr * weight_decay)
    exp_avg.lerp_(grad, 1 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    denom = (exp_avg_sq.sqrt() / math.sqrt(bias_correction2)).add_(eps)
    param.addcdiv_(exp_avg, denom, value=-lr / bias_correction1)
