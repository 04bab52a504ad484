"""Evaluation points of the Hessian-error study: a start per regime, then a normalised-gradient-descent path
x_{t+1} = x_t - step g/||g|| (the paper's path; successive points are what query reuse carries pairs across).

R-near: x* + scale N(0, I) (small gradient); R-paper: uniform in the ball of the given radius (large gradient).
"""
from __future__ import annotations

import torch

from tasks.zeroth.functions import TestFunction

REGIMES = ("near", "paper")


def start(function: TestFunction, regime: str, generator: torch.Generator, near_scale: float,
          radius: float) -> torch.Tensor:
    d = function.minimiser.numel()
    if regime == "near":
        return function.minimiser + near_scale * torch.randn(d, generator=generator, dtype=torch.float64)
    direction = torch.randn(d, generator=generator, dtype=torch.float64)
    r = radius * torch.rand(1, generator=generator, dtype=torch.float64) ** (1 / d)
    return r * direction / torch.linalg.vector_norm(direction)


def path(function: TestFunction, x0: torch.Tensor, count: int, step: float) -> torch.Tensor:
    """`count` points (count, d) from x0 along normalised gradient descent (torch autograd gradients)."""
    points = [x0]
    for _ in range(count - 1):
        x = points[-1].clone().requires_grad_(True)
        (gradient,) = torch.autograd.grad(function.f(x[None])[0], x)
        points.append((x - step * gradient / torch.linalg.vector_norm(gradient)).detach())
    return torch.stack(points)
