"""The barycentric adversary of SW-DRSO (spec §3.3-3.4): the worst reweighting of a set and its outlier pool.

Support Z = [x_1..x_n, o_1..o_M] per set; weights a = [(1 - eps) a_in, eps a_out] with a_in on the capped simplex
(cap 1 / ((1 - rho) n): up to a rho fraction of the mass deleted) and a_out on the simplex (which candidate
outliers carry the eps outlier mass). Starting from uniform, T steps of ascent on the per-set loss with the
network frozen: gradients normalised per set by their largest entry (raw weight gradients of a confident
network are tiny and the weights would barely move), mirror (exponentiated) ascent for a_out, projected ascent
for a_in. T = 0 leaves the uniform weights: the Random-weights baseline.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from tasks.sets.capped_simplex import project_capped_simplex, total_variation
from tasks.sets.sliced_wasserstein import sliced_wasserstein_squared


@dataclass
class Adversary:
    a: torch.Tensor  # [B, n + M] the final weights, detached
    a_in: torch.Tensor  # [B, n]
    a_out: torch.Tensor  # [B, M]


def mix(a_in: torch.Tensor, a_out: torch.Tensor, eps: torch.Tensor) -> torch.Tensor:
    return torch.cat([(1 - eps)[:, None] * a_in, eps[:, None] * a_out], dim=1)


def deletion_cap(n: int, rho: torch.Tensor) -> torch.Tensor:
    return 1.0 / ((1.0 - rho) * n)


def normalise_rows(g: torch.Tensor) -> torch.Tensor:
    """g / max |g| per row (a zero row stays zero): scale-free steps."""
    return g / g.abs().amax(dim=1, keepdim=True).clamp_min(1e-30)


def sw_penalty(Z: torch.Tensor, a: torch.Tensor, n: int, directions: torch.Tensor) -> torch.Tensor:
    """sum over the batch of SW_2^2 between (Z, a) and the clean uniform set Z[:, :n]."""
    uniform = torch.full((n,), 1.0 / n, dtype=Z.dtype, device=Z.device)
    return sum(sliced_wasserstein_squared(Z[b], a[b], Z[b, :n], uniform, directions) for b in range(Z.shape[0]))


def inner_max(model, Z: torch.Tensor, n: int, y: torch.Tensor, eps: torch.Tensor, rho: torch.Tensor, *,
              steps: int, alpha: float, sw_gamma: float = 0.0, directions: torch.Tensor | None = None) -> Adversary:
    """`steps` ascent steps on the weights of Z [B, n + M, d] for labels y [B], outlier mass eps [B] and deletion
    budget rho [B]. With sw_gamma > 0 the ascent maximises loss - sw_gamma SW_2^2((Z, a), clean set)."""
    B, total = Z.shape[:2]
    M = total - n
    a_in = torch.full((B, n), 1.0 / n, dtype=Z.dtype, device=Z.device)
    a_out = torch.full((B, M), 1.0 / M, dtype=Z.dtype, device=Z.device)
    cap = deletion_cap(n, rho)
    for _ in range(steps):
        a_in.requires_grad_(True)
        a_out.requires_grad_(True)
        a = mix(a_in, a_out, eps)
        J = F.cross_entropy(model(Z, a), y, reduction="sum")  # a sum of per-set losses: per-set gradients
        if sw_gamma > 0:
            J = J - sw_gamma * sw_penalty(Z, a, n, directions)
        g_in, g_out = torch.autograd.grad(J, [a_in, a_out])
        with torch.no_grad():
            a_out = a_out * torch.exp(alpha * normalise_rows(g_out))
            a_out = a_out / a_out.sum(dim=1, keepdim=True)
            a_in = project_capped_simplex(a_in + (alpha / n) * normalise_rows(g_in), cap)
    a_in, a_out = a_in.detach(), a_out.detach()
    return Adversary(mix(a_in, a_out, eps), a_in, a_out)


def clean_weights(B: int, n: int, M: int, like: torch.Tensor) -> torch.Tensor:
    """a0 on the augmented support: uniform on the set, zero on the outlier pool."""
    return torch.cat([torch.full((B, n), 1.0 / n, dtype=like.dtype), torch.zeros(B, M, dtype=like.dtype)], dim=1)


def diagnostics(adversary: Adversary, n: int) -> dict[str, float]:
    """Mean outlier mass, mean deleted fraction of the set's elements (weight 0) and mean TV(a*, a0)."""
    B, total = adversary.a.shape
    a0 = clean_weights(B, n, total - n, adversary.a)
    return {"outlier_mass": float(adversary.a[:, n:].sum(dim=1).mean()),
            "deleted_fraction": float((adversary.a_in <= 1e-9).float().mean()),
            "tv": float(total_variation(adversary.a, a0).mean())}
