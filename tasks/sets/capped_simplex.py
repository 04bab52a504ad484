"""The capped simplex {a >= 0, sum a = 1, a_i <= cap}: Euclidean projection onto it and total variation.

With cap = 1 / ((1 - rho) n) it is the set of reweightings of n elements that may delete up to a rho fraction
of the mass (every kept element at most doubles when half is deleted); cap = 1/n leaves only the uniform point.
"""
from __future__ import annotations

import torch

BISECTION_STEPS = 30


def project_capped_simplex(v: torch.Tensor, cap: torch.Tensor | float, steps: int = BISECTION_STEPS) -> torch.Tensor:
    """Row-wise projection of v [B, n] onto {a >= 0, sum a = 1, a <= cap} (cap [B] or a float, cap * n >= 1).

    The projection is clip(v - tau, 0, cap) with tau the root of sum clip(v - tau, 0, cap) = 1, a decreasing
    function of tau: found by bisection between min(v) - cap (every entry at the cap: sum >= 1) and max(v) (sum 0).
    """
    cap = torch.as_tensor(cap, dtype=v.dtype, device=v.device).expand(v.shape[0])[:, None]
    if bool((cap * v.shape[1] < 1 - 1e-9).any()):
        raise ValueError("cap: cap * n must be >= 1 (the capped simplex is empty)")
    low = v.amin(dim=1, keepdim=True) - cap
    high = v.amax(dim=1, keepdim=True)
    for _ in range(steps):
        middle = (low + high) / 2
        above = (v - middle).clamp(min=0).minimum(cap).sum(dim=1, keepdim=True) > 1
        low, high = torch.where(above, middle, low), torch.where(above, high, middle)
    return (v - (low + high) / 2).clamp(min=0).minimum(cap)


def total_variation(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """TV(a, b) = 1/2 sum |a - b| per row."""
    return 0.5 * (a - b).abs().sum(dim=-1)
