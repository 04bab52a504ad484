"""Proximal maps, batched over leading dimensions (torch).

The l1 map is tasks.optim.prox_sgd.soft_threshold (one soft threshold in the project). The edge maps act on one
pair of blocks (u, v) = (x_i, x_j) of a graph-guided regulariser h(u, v) = tau ||u - v||: since h = tau ||D .||
with D = [I, -I] and D D^T = 2 I, prox_h(z) = z + D^T (prox_{2 tau ||.||}(D z) - D z) / 2, i.e. only the
difference u - v is shrunk (by the Euclidean or the l1 map with twice the weight) and u + v is kept.
"""
from __future__ import annotations

import torch

from tasks.optim.prox_sgd import soft_threshold


def euclidean_shrink(delta: torch.Tensor, tau: torch.Tensor) -> torch.Tensor:
    """prox of tau ||.||_2 on the last dimension: delta (1 - tau/||delta||)_+ ; tau broadcasts over the rest."""
    norm = torch.linalg.vector_norm(delta, dim=-1, keepdim=True)
    return delta * torch.clamp(1 - tau[..., None] / torch.clamp(norm, min=torch.finfo(delta.dtype).tiny), min=0)


def edge_prox_l2(u: torch.Tensor, v: torch.Tensor, tau: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """prox of tau ||u - v||_2 on the pair: both become (u+v)/2 when ||u - v|| <= 2 tau, else each moves tau
    towards the other along u - v. u, v (..., p); tau (...)."""
    mean, delta = (u + v) / 2, euclidean_shrink(u - v, 2 * tau) / 2
    return mean + delta, mean - delta


def edge_prox_l1(u: torch.Tensor, v: torch.Tensor, tau: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """prox of tau ||u - v||_1 on the pair: y = soft(u - v, 2 tau); u <- (u+v+y)/2, v <- (u+v-y)/2."""
    mean, delta = (u + v) / 2, soft_threshold(u - v, 2 * tau[..., None]) / 2
    return mean + delta, mean - delta


def l1_prox(x: torch.Tensor, tau: torch.Tensor) -> torch.Tensor:
    """prox of tau ||.||_1 per row of x (..., d) with its own tau (...)."""
    return soft_threshold(x, tau[..., None])
