"""Sliced Wasserstein distance SW_2^2 between two weighted point sets, differentiable in positions and weights.

Per projection direction theta the 1-D W_2^2 of the projected measures is the integral over quantile levels of
(F^-1(t) - G^-1(t))^2, computed exactly by merging the two cumulative weight sequences (the weighted quantile
matching). SW_2^2 is its mean over the directions. POT's ot.sliced_wasserstein_distance computes the same
quantity (squared) for the same directions; the tests check one against the other.
"""
from __future__ import annotations

import torch


def random_directions(dim: int, count: int, generator: torch.Generator | None = None,
                      dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """[dim, count] unit directions, uniform on the sphere."""
    directions = torch.randn(dim, count, generator=generator, dtype=dtype)
    return directions / directions.norm(dim=0, keepdim=True)


def wasserstein_1d_squared(u: torch.Tensor, a: torch.Tensor, v: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """W_2^2 between sum a_i delta_{u_i} and sum b_j delta_{v_j} on the line, for each column of u [n, L], v [m, L]
    (weights a [n], b [m], each summing to 1) -> [L]."""
    u_sorted, u_order = torch.sort(u, dim=0)
    v_sorted, v_order = torch.sort(v, dim=0)
    cum_a = torch.cumsum(a[u_order], dim=0)  # [n, L]
    cum_b = torch.cumsum(b[v_order], dim=0)
    levels, _ = torch.sort(torch.cat([cum_a, cum_b], dim=0), dim=0)  # every breakpoint of either quantile function
    levels = levels.clamp(max=1.0)
    widths = torch.diff(levels, dim=0, prepend=torch.zeros_like(levels[:1]))
    # each interval (levels[k-1], levels[k]] lies in one step of each quantile function: the first index whose
    # cumulative weight reaches levels[k] (detached searches; the gradient flows through positions and widths)
    index_u = torch.searchsorted(cum_a.T.detach().contiguous(), levels.T.detach().contiguous()).T.clamp(max=u.shape[0] - 1)
    index_v = torch.searchsorted(cum_b.T.detach().contiguous(), levels.T.detach().contiguous()).T.clamp(max=v.shape[0] - 1)
    gap = torch.gather(u_sorted, 0, index_u) - torch.gather(v_sorted, 0, index_v)
    return (widths * gap**2).sum(dim=0)


def sliced_wasserstein_squared(X: torch.Tensor, a: torch.Tensor, Y: torch.Tensor, b: torch.Tensor,
                               directions: torch.Tensor) -> torch.Tensor:
    """SW_2^2 = mean over the directions [d, L] of W_2^2 of the projections of (X [n, d], a) and (Y [m, d], b)."""
    return wasserstein_1d_squared(X @ directions, a, Y @ directions, b).mean()
