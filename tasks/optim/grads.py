"""Gradient measurements shared by the optimizers and the training loop."""
from __future__ import annotations


def global_grad_norm_sq(params) -> float:
    """||g||^2 over all parameters together (those with a gradient), in float64 (one number per step, not one per
    layer)."""
    return float(sum(p.grad.double().square().sum() for p in params if p.grad is not None))
