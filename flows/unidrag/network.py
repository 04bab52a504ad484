"""The UniDrag network (spec §3.2; the paper names the parts, the internals are our reading).

Trunk: enhanced Physics-Sliced Attention (ePSA, Transolver++-style "eidetic" slices) over the
union of surface and volume tokens, so the same slices couple body and flow. Then Gated Expert
Routing (GER, a multi-gate mixture of experts): E experts shared by all outputs, one top-k gate
per output modality {surface, volume, cd, profile}. Then the shared heads.

Flags: epsa=False uses plain Physics-Attention slices (one learned temperature per head, no
noise); ger=False replaces GER by one plain FFN d -> 2d -> d for every modality (the minus-GER
ablation; GER with E = 1 is exactly such an FFN).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from tasks.cfd.surrogate.heads import Heads, mlp
from tasks.cfd.surrogate.transolver import TEMPERATURE_INIT, PhysicsAttention, PhysicsTrunk, slice_weights

MODALITIES = ("surface", "volume", "cd", "profile")
TEMPERATURE_OFFSET_BIAS = -2.0  # softplus(-2) = 0.13: start near the plain slices' T = 0.5 (our choice)


def gumbel_noise(shape, generator: torch.Generator | None = None, device=None) -> torch.Tensor:
    """g = -log(-log u), u ~ U(0, 1) (clamped away from 0 and 1)."""
    u = torch.rand(shape, generator=generator, device=device).clamp(1e-10, 1 - 1e-7)
    return -torch.log(-torch.log(u))


class EideticPhysicsAttention(PhysicsAttention):
    """ePSA: per-point temperature T_i = T_0 + softplus(Linear(a_i)), clamped to [0.1, 5], and in
    training Gumbel-softmax slice weights softmax((W a_i + g_i) / T_i); no noise in eval mode."""

    def __init__(self, d: int, heads: int, slices: int):
        super().__init__(d, heads, slices)
        self.temperature_offset = nn.Linear(self.head_width, 1)
        nn.init.constant_(self.temperature_offset.bias, TEMPERATURE_OFFSET_BIAS)
        del self.temperature  # replaced by the per-point temperature

    def weights(self, a: torch.Tensor) -> torch.Tensor:
        logits = self.slice_logits(a)
        if self.training:
            logits = logits + gumbel_noise(logits.shape, device=logits.device).to(logits.dtype)
        return slice_weights(logits, TEMPERATURE_INIT + F.softplus(self.temperature_offset(a)))


def top_k_gates(logits: torch.Tensor, k: int) -> torch.Tensor:
    """softmax over experts (last axis), keep the k largest, renormalise them to sum to 1."""
    probs = logits.softmax(-1)
    kept = probs.topk(min(k, probs.shape[-1]), -1)
    sparse = torch.zeros_like(probs).scatter(-1, kept.indices, kept.values)
    return sparse / sparse.sum(-1, keepdim=True)


def load_balance_loss(probs: torch.Tensor) -> torch.Tensor:
    """Switch-style E * sum_e (mean gate probability of e) * (fraction of tokens whose top-1 is e),
    probs [..., E] over all tokens; 1 when perfectly balanced."""
    probs = probs.reshape(-1, probs.shape[-1])
    experts = probs.shape[-1]
    top1 = F.one_hot(probs.argmax(-1), experts).to(probs.dtype)
    return experts * (probs.mean(0) * top1.mean(0)).sum()


class GatedExpertRouting(nn.Module):
    """E experts (d -> 2d -> d) and one gate per modality: r_m = sum_e g_m,e(h) Expert_e(h) with
    g_m the top-k renormalised softmax of W_m h. Experts run densely (all tokens, all experts):
    at these sizes that is cheaper than gathering the routed tokens."""

    def __init__(self, d: int, experts: int, top_k: int):
        super().__init__()
        if not 1 <= top_k <= experts:
            raise ValueError(f"top_k: must be in [1, experts = {experts}], got {top_k}")
        self.top_k = top_k
        self.experts = nn.ModuleList(mlp([d, 2 * d, d]) for _ in range(experts))
        self.gates = nn.ModuleDict({m: nn.Linear(d, experts) for m in MODALITIES})

    def forward(self, h: torch.Tensor, modalities: tuple[str, ...]) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
        """Per modality: (r [B, N, d], gate probabilities before top-k [B, N, E]) for tokens h [B, N, d];
        the experts run once for all the modalities that read these tokens."""
        expert_out = torch.stack([expert(h) for expert in self.experts], -1)  # [B, N, d, E]
        routed = {}
        for m in modalities:
            logits = self.gates[m](h)
            routed[m] = (expert_out * top_k_gates(logits, self.top_k)[..., None, :]).sum(-1), logits.softmax(-1)
        return routed


class UniDragNet(PhysicsTrunk):
    """Embedding MLP -> n_b (e)PSA blocks over surface + volume tokens -> GER (or one FFN) -> heads.

    forward returns the heads' dict plus aux_loss (the load-balance loss summed over the four
    gates; 0 without GER) and gate_usage [4, E] (mean gate probability per modality, detached)."""

    def __init__(self, features: int, d: int, blocks: int, heads: int, slices: int, experts: int, top_k: int,
                 bins: int, ger: bool = True, epsa: bool = True):
        attention = EideticPhysicsAttention if epsa else PhysicsAttention
        super().__init__(features, d, blocks, lambda: attention(d, heads, slices))
        self.routing = GatedExpertRouting(d, experts, top_k) if ger else None
        self.ffn = None if ger else mlp([d, 2 * d, d])
        self.heads = Heads(d, bins)

    def forward(self, surface_feats, volume_feats, surface_x) -> dict[str, torch.Tensor]:
        hs, hv = self.trunk(surface_feats, volume_feats)
        if self.routing is None:
            rs, rv = self.ffn(hs), self.ffn(hv)
            out = self.heads(rs, rv, rs, rs, surface_x)
            return out | {"aux_loss": hs.new_zeros(())}
        routed = self.routing(hs, ("surface", "cd", "profile")) | self.routing(hv, ("volume",))
        out = self.heads(*(routed[m][0] for m in MODALITIES), surface_x)
        aux = sum(load_balance_loss(routed[m][1]) for m in MODALITIES)
        usage = torch.stack([routed[m][1].detach().flatten(0, 1).mean(0) for m in MODALITIES])
        return out | {"aux_loss": aux, "gate_usage": usage}
