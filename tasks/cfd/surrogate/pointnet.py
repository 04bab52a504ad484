"""PointNet regression baseline (Qi et al. 2017; spec §4).

A shared per-point MLP embeds every surface and volume point; a max-pool over all of them gives
one global shape code; each point's head input is MLP(concat(global, local)). The heads are the
shared ones (surface Cp, volume fields, pooled Cd, binned profile), so only the trunk differs.
"""
from __future__ import annotations

import torch
from torch import nn

from .heads import Heads, mlp


class PointNet(nn.Module):
    def __init__(self, features: int, d: int, bins: int):
        super().__init__()
        self.local = mlp([features, d, 2 * d, d])
        self.fuse = mlp([2 * d, 2 * d, d])
        self.heads = Heads(d, bins)

    def trunk_parameters(self) -> list[nn.Parameter]:
        return [*self.local.parameters(), *self.fuse.parameters()]

    def forward(self, surface_feats, volume_feats, surface_x) -> dict[str, torch.Tensor]:
        ns = surface_feats.shape[1]
        local = self.local(torch.cat([surface_feats, volume_feats], 1))  # [B, N, d]
        shape_code = local.max(1, keepdim=True).values.expand_as(local)
        h = self.fuse(torch.cat([shape_code, local], -1))
        hs, hv = h[:, :ns], h[:, ns:]
        return self.heads(hs, hv, hs, hs, surface_x)
