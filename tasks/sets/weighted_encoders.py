"""Permutation-invariant set encoders that take a weight per element (a point of the simplex).

A set X = {x_1..x_n} with weights a (a_i >= 0, sum a = 1) is the measure sum_i a_i delta_{x_i}; every encoder
here is a function of that measure: duplicating an element and halving its weight changes nothing, a zero
weight is the element's absence, and uniform weights give the ordinary unweighted encoder. That is what lets an
adversary (or an augmentation) act on the weights alone, differentiably.

Shapes: X [B, n, d], a [B, n] (None: uniform 1/n), logits [B, classes].
- mean:      r = sum_i a_i phi(x_i)                                  (DeepSets)
- attention: r = sum_i w_i v(phi(x_i)), w = softmax(q.k(phi(x_i))/sqrt(h) + log a_i)   (one-seed, one-head PMA)
- lse:       r_j = tau log sum_i a_i exp(phi_j(x_i)/tau)             (PointNet's max, made smooth in the weights)
"""
from __future__ import annotations

import math
from typing import Literal

import torch
from pydantic import Field
from torch import nn

from tasks.core.params import Params

POOLINGS = ("mean", "attention", "lse")


class EncoderConfig(Params):
    pooling: Literal[POOLINGS]
    dim: int = Field(ge=1)  # element dimension d
    classes: int = Field(ge=1)
    hidden: int = Field(default=64, ge=1)
    tau: float = Field(default=0.1, gt=0)  # lse temperature

    def to_json(self) -> dict:
        return self.model_dump()


def uniform_weights(X: torch.Tensor) -> torch.Tensor:
    return torch.full(X.shape[:2], 1.0 / X.shape[1], dtype=X.dtype, device=X.device)


def weighted_softmax(scores: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
    """softmax(scores + log a) along the last axis, written as a_i e^{s_i} / sum_j a_j e^{s_j} so that a zero
    weight is exactly an absent element and the gradient in a stays finite there (log 0 would not)."""
    shift = scores.masked_fill(a <= 0, float("-inf")).amax(dim=-1, keepdim=True).detach()
    unnormalised = a * torch.exp((scores - shift).clamp_max(0.0))  # clamp: zero-weight scores may exceed the shift
    return unnormalised / unnormalised.sum(dim=-1, keepdim=True)


def weighted_logsumexp(values: torch.Tensor, a: torch.Tensor, tau: float) -> torch.Tensor:
    """tau log sum_i a_i exp(values_i / tau) over axis 1 (values [B, n, h], a [B, n]) -> [B, h]."""
    scaled = values / tau
    shift = scaled.masked_fill((a <= 0)[..., None], float("-inf")).amax(dim=1, keepdim=True).detach()
    total = (a[..., None] * torch.exp((scaled - shift).clamp_max(0.0))).sum(dim=1)
    return tau * (shift.squeeze(1) + torch.log(total))


def mlp(sizes: list[int]) -> nn.Sequential:
    layers = []
    for i, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(nn.Linear(fan_in, fan_out))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class WeightedSetClassifier(nn.Module):
    """phi (per element) -> weighted pooling -> rho (head): a set classifier that is a function of the measure."""

    def __init__(self, config: EncoderConfig):
        super().__init__()
        self.config = config
        h = config.hidden
        self.phi = nn.Sequential(mlp([config.dim, h, h]), nn.ReLU())
        if config.pooling == "attention":
            self.seed = nn.Parameter(torch.randn(h) / math.sqrt(h))  # the PMA seed vector q
            self.key, self.value = nn.Linear(h, h), nn.Linear(h, h)
        self.rho = mlp([h, h, config.classes])

    def pool(self, features: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        """[B, n, h] element features and [B, n] weights -> [B, h] set representation."""
        if self.config.pooling == "mean":
            return torch.einsum("bn,bnh->bh", a, features)
        if self.config.pooling == "attention":
            scores = self.key(features) @ self.seed / math.sqrt(self.config.hidden)  # [B, n]
            return torch.einsum("bn,bnh->bh", weighted_softmax(scores, a), self.value(features))
        return weighted_logsumexp(features, a, self.config.tau)

    def forward(self, X: torch.Tensor, a: torch.Tensor | None = None) -> torch.Tensor:
        a = uniform_weights(X) if a is None else a
        return self.rho(self.pool(self.phi(X), a))
