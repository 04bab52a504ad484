"""Transolver (Wu et al., ICML 2024): Physics-Attention and the Transolver baseline (spec §3.2, §4).

Physics-Attention, per head: tokens x_i [N, d_h] -> slice logits W a_i and values v_i; slice
weights w_i = softmax_j(W a_i / T) over M slices; slice tokens z_j = sum_i w_ij v_i / (sum_i w_ij
+ 1e-5); self-attention among the M slice tokens; deslice out_i = sum_j w_ij z'_j. Linear in the
number of points and invariant to their order (every sum over points is a set operation).

The baseline runs the Physics-Attention trunk over the union of surface and volume tokens and
feeds the trunk output straight to the shared heads (no experts, no MPL).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .heads import Heads, mlp

TEMPERATURE_INIT = 0.5
TEMPERATURE_RANGE = (0.1, 5.0)


def slice_weights(logits: torch.Tensor, temperature: torch.Tensor) -> torch.Tensor:
    """softmax over the last axis (slices) of logits [B, H, N, M] / temperature (broadcastable)."""
    return (logits / temperature.clamp(*TEMPERATURE_RANGE)).softmax(-1)


def slice_tokens(weights: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """z [B, H, M, d_h]: weighted means of values [B, H, N, d_h] with weights [B, H, N, M]."""
    return weights.transpose(-1, -2) @ values / (weights.sum(2)[..., None] + 1e-5)


class PhysicsAttention(nn.Module):
    """Slice / attend / deslice over tokens [B, N, d]. Subclasses change how slice weights are
    drawn (`weights`); the slicing, the attention among slices and the deslicing stay here."""

    def __init__(self, d: int, heads: int, slices: int):
        super().__init__()
        if d % heads:
            raise ValueError(f"heads: width d = {d} must be divisible by heads, got {heads}")
        self.heads, self.head_width = heads, d // heads
        self.to_logit_input, self.to_values = nn.Linear(d, d), nn.Linear(d, d)
        self.slice_logits = nn.Linear(self.head_width, slices)
        nn.init.orthogonal_(self.slice_logits.weight)
        self.temperature = nn.Parameter(torch.full((heads, 1, 1), TEMPERATURE_INIT))
        self.q, self.k, self.v = (nn.Linear(self.head_width, self.head_width, bias=False) for _ in range(3))
        self.out = nn.Linear(d, d)
        self.last_weights: torch.Tensor | None = None  # [B, H, N, M], kept for inspection and tests

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:  # [B, N, d] -> [B, H, N, d_h]
        return x.unflatten(-1, (self.heads, self.head_width)).transpose(1, 2)

    def weights(self, a: torch.Tensor) -> torch.Tensor:
        """Slice weights [B, H, N, M] from the per-head logit inputs a [B, H, N, d_h]."""
        return slice_weights(self.slice_logits(a), self.temperature)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a, values = self.split_heads(self.to_logit_input(x)), self.split_heads(self.to_values(x))
        w = self.weights(a)
        self.last_weights = w.detach()
        z = slice_tokens(w, values)  # [B, H, M, d_h]
        z = F.scaled_dot_product_attention(self.q(z), self.k(z), self.v(z))  # scale 1/sqrt(d_h)
        out = w @ z  # deslice: [B, H, N, d_h]
        return self.out(out.transpose(1, 2).flatten(-2))


class Block(nn.Module):
    """h <- h + attention(LN(h)); h <- h + FFN(LN(h)), FFN d -> 2d -> d."""

    def __init__(self, d: int, attention: nn.Module):
        super().__init__()
        self.norm1, self.attention = nn.LayerNorm(d), attention
        self.norm2, self.ffn = nn.LayerNorm(d), mlp([d, 2 * d, d])

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        h = h + self.attention(self.norm1(h))
        return h + self.ffn(self.norm2(h))


class PhysicsTrunk(nn.Module):
    """The trunk every slice-attention surrogate shares: an embedding MLP, then n_b blocks over the
    union of surface and volume tokens (one set of slices couples body and flow)."""

    def __init__(self, features: int, d: int, blocks: int, attention):
        super().__init__()
        self.embed = mlp([features, 2 * d, d])
        self.blocks = nn.ModuleList(Block(d, attention()) for _ in range(blocks))

    def trunk_parameters(self) -> list[nn.Parameter]:
        """The parameters every modality shares (where MPL applies PCGrad)."""
        return [*self.embed.parameters(), *self.blocks.parameters()]

    def trunk(self, surface_feats: torch.Tensor, volume_feats: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Surface [B, Ns, d] and volume [B, Nv, d] token states after the blocks."""
        ns = surface_feats.shape[1]
        h = self.embed(torch.cat([surface_feats, volume_feats], 1))
        for block in self.blocks:
            h = block(h)
        return h[:, :ns], h[:, ns:]


class Transolver(PhysicsTrunk):
    """Embedding MLP -> n_b Physics-Attention blocks over surface + volume tokens -> shared heads."""

    def __init__(self, features: int, d: int, blocks: int, heads: int, slices: int, bins: int):
        super().__init__(features, d, blocks, lambda: PhysicsAttention(d, heads, slices))
        self.heads = Heads(d, bins)

    def forward(self, surface_feats, volume_feats, surface_x) -> dict[str, torch.Tensor]:
        hs, hv = self.trunk(surface_feats, volume_feats)
        return self.heads(hs, hv, hs, hs, surface_x)
