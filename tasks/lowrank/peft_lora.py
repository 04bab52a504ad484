"""Balancing applied to the LoRA adapters of a peft model, in place, after each optimizer step.

peft writes the update as s * lora_B @ lora_A (lora_B.weight [out, r], lora_A.weight [r, in]): the paper's left
factor A is peft's lora_B and its right factor B is peft's lora_A. Only the weights change; the optimizer's
state (Adam moments) is left as it is, as in the paper.

Add BaLoRA to your own fine-tuning with either
    trainer = Trainer(model=peft_model, ..., callbacks=[BalancingCallback()])
or, in a hand-written loop, `balance_lora_(peft_model)` right after `optimizer.step()`.
"""
from __future__ import annotations

import torch
from transformers import TrainerCallback

from .balance import VARIANTS


def lora_factor_pairs(model: torch.nn.Module):
    """(module name, adapter name, left factor = lora_B.weight, right factor = lora_A.weight) of every LoRA layer."""
    from peft.tuners.lora import LoraLayer

    for name, module in model.named_modules():
        if isinstance(module, LoraLayer):
            for adapter in module.lora_A:
                if adapter in module.lora_B:
                    yield name, adapter, module.lora_B[adapter].weight, module.lora_A[adapter].weight


@torch.no_grad()
def balance_lora_(model: torch.nn.Module, variant: str = "svd") -> int:
    """Balance every LoRA pair of `model` in place (lora_A lora_A^T = lora_B^T lora_B, product unchanged);
    returns how many pairs changed. A pair with a zero product (LoRA's init) or a failed SVD is skipped."""
    project, changed = VARIANTS[variant], 0
    for _, _, left, right in lora_factor_pairs(model):
        if not left.any() or not right.any():
            continue
        try:
            new_left, new_right = project(left, right)
        except torch.linalg.LinAlgError:  # as the authors' callback: skip this layer this step
            continue
        left.copy_(new_left)
        right.copy_(new_right)
        changed += 1
    return changed


class BalancingCallback(TrainerCallback):
    """BaLoRA for a transformers Trainer: balance the LoRA pairs after every `every`-th optimizer step."""

    def __init__(self, variant: str = "svd", every: int = 1):
        if variant not in VARIANTS:
            raise ValueError(f"variant: must be one of {sorted(VARIANTS)}, got {variant!r}")
        if every < 1:
            raise ValueError(f"every: must be >= 1, got {every!r}")
        self.variant, self.every, self.steps = variant, every, 0

    def on_optimizer_step(self, args, state, control, model=None, **kwargs):
        self.steps += 1
        if model is not None and self.steps % self.every == 0:
            balance_lora_(model, self.variant)
