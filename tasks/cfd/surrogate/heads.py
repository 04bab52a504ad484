"""Output heads shared by the point-cloud surrogates (spec §3.2 "Heads").

Every model ends in the same heads, so a comparison isolates the trunk (and GER / MPL):
per-token MLPs for surface Cp and the volume fields, attention pooling with a learned query
for Cd, and per-surface-token drag contributions binned by x into the cumulative profile.
"""
from __future__ import annotations

from itertools import pairwise

import torch
from torch import nn


def mlp(widths: list[int]) -> nn.Sequential:
    """Linear layers of the given widths with GELU between them (none after the last)."""
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(pairwise(widths)):
        layers += [nn.Linear(a, b)] + ([nn.GELU()] if i < len(widths) - 2 else [])
    return nn.Sequential(*layers)


def binned_profile(contributions: torch.Tensor, x: torch.Tensor, bins: int) -> torch.Tensor:
    """Cumulative profile [B, K] from per-point contributions [B, N] at streamwise positions x
    [B, N] (body units): increment k sums the points with floor(K x) = k (clamped to [0, K-1],
    as the LBM bins links), then a cumulative sum; the last entry is the sum of all contributions."""
    index = (x.detach() * bins).floor().long().clamp(0, bins - 1)
    increments = contributions.new_zeros(contributions.shape[0], bins).scatter_add(1, index, contributions)
    return increments.cumsum(1)


class AttentionPool(nn.Module):
    """softmax_i(q . k_i / sqrt(d)) weighted sum of v_i with one learned query q: [B, N, d] -> [B, d]."""

    def __init__(self, d: int):
        super().__init__()
        self.query = nn.Parameter(torch.randn(d) / d ** 0.5)
        self.key, self.value = nn.Linear(d, d), nn.Linear(d, d)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        scores = self.key(h) @ self.query / h.shape[-1] ** 0.5  # [B, N]
        return (scores.softmax(-1)[..., None] * self.value(h)).sum(1)


class Heads(nn.Module):
    """Inputs per modality (r_surface, r_cd, r_profile: [B, Ns, d]; r_volume: [B, Nv, d]) and the
    surface points' x [B, Ns] -> dict(cd [B], profile [B, K], contributions [B, Ns], surface_cp
    [B, Ns], volume [B, Nv, 3]), standardized units. A contribution is the head's scalar times
    K / Ns, so the profile does not scale with the number of surface points."""

    def __init__(self, d: int, bins: int):
        super().__init__()
        self.bins = bins
        self.surface, self.volume = mlp([d, d, 1]), mlp([d, d, 3])
        self.pool, self.cd = AttentionPool(d), mlp([d, d, 1])
        self.contribution = mlp([d, d, 1])

    def forward(self, r_surface, r_volume, r_cd, r_profile, surface_x) -> dict[str, torch.Tensor]:
        contributions = self.contribution(r_profile)[..., 0] * (self.bins / r_profile.shape[1])
        return {"cd": self.cd(self.pool(r_cd))[..., 0],
                "profile": binned_profile(contributions, surface_x, self.bins),
                "contributions": contributions,
                "surface_cp": self.surface(r_surface)[..., 0],
                "volume": self.volume(r_volume)}
