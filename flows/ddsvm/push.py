"""DDSVM's geometry-aware feature refinement (spec §3.2-3.3): the margin-widening push direction from the
fixed SVM, its projection onto the sphere's tangent space, the pushed target and the push loss.

All functions take the normalised features u [B, D] (unit rows), labels y [B] and the SVM's weights W [C, D]
and biases b [C] as tensors. Directions and targets are computed from u detached: were gradients to flow
through the target, the loss would collapse to zero (spec §11).
"""
from __future__ import annotations

from typing import Literal

import torch

Option = Literal["A", "B", "C"]
OPTIONS = ("A", "B", "C")


def unit_normals(W: torch.Tensor) -> torch.Tensor:
    return W / W.norm(dim=1, keepdim=True)


def push_direction(u: torch.Tensor, y: torch.Tensor, W: torch.Tensor, b: torch.Tensor, option: Option = "A",
                   only_violators: bool = False) -> torch.Tensor:
    """d [B, D]. A: the own class's unit normal w^_y. B: w^_y - w^_k*, k* the highest-scoring other class.
    C: sum_k t_ik w^_k over the hyperplanes whose hinge is active (t_ik s_k(u) < 1). only_violators zeroes
    the samples already beyond their own margin (s_y(u) >= 1)."""
    u = u.detach()
    normals = unit_normals(W)
    scores = u @ W.T + b  # [B, C]
    rows = torch.arange(len(y))
    if option == "A":
        d = normals[y]
    elif option == "B":
        rivals = scores.clone()
        rivals[rows, y] = -torch.inf
        d = normals[y] - normals[rivals.argmax(1)]
    elif option == "C":
        signs = -torch.ones_like(scores)
        signs[rows, y] = 1.0
        d = (signs * (signs * scores < 1)) @ normals
    else:
        raise ValueError(f"option: must be one of {OPTIONS}, got {option!r}")
    if only_violators:
        d = d * (scores[rows, y] < 1).unsqueeze(1)
    return d


def tangent_project(u: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
    """d - (u . d) u: the part of d tangent to the sphere at u."""
    return d - (u * d).sum(1, keepdim=True) * u


def pushed_target(u: torch.Tensor, d_tangent: torch.Tensor, eta: float) -> torch.Tensor:
    """u+ = (u + eta d_tangent) / |u + eta d_tangent|: a step along the tangent, retracted onto the sphere."""
    moved = u + eta * d_tangent
    return moved / moved.norm(dim=1, keepdim=True)


def push_loss(u: torch.Tensor, y: torch.Tensor, W: torch.Tensor, b: torch.Tensor, eta: float, option: Option = "A",
              only_violators: bool = False) -> torch.Tensor:
    """L_push = mean_i |u_i - stopgrad(u_i+)|^2 / eta. Divided by eta so that its gradient, ~ -2 d_tangent / B,
    does not vanish for small eta (spec §3.3)."""
    fixed = u.detach()
    target = pushed_target(fixed, tangent_project(fixed, push_direction(fixed, y, W, b, option, only_violators)), eta)
    return ((u - target) ** 2).sum(1).mean() / eta


def linear_surrogate_loss(u: torch.Tensor, y: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
    """L_lin = -mean_i w^_{y_i} . u_i: the first-order equivalent of option A's push loss (half its gradient)."""
    return -(unit_normals(W)[y] * u).sum(1).mean()
