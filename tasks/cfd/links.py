"""Body boundary links: construction from inside functions, bounce-back, momentum exchange.

A link (x_f, i) joins a fluid node x_f to a solid node x_f + c_i. Links are stored as flat
indices into populations viewed as [Q * N] (N = batch x nodes), so bounce-back is one gather
and one scatter over all links of all bodies, and forces are an index_add_ by body id.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from .lattice import Lattice

BISECTION_STEPS = 12


@dataclass(frozen=True)
class BodyLinks:
    """All boundary links of a batch. Bounce-back writes
    new[target] = first_weight * post[source] + second_weight * post[second]."""

    source: torch.Tensor  # [L] i * N + x_f: post-collision f_i(x_f), the population hitting the wall
    target: torch.Tensor  # [L] opp(i) * N + x_f: the reflected population
    second: torch.Tensor  # [L] Bouzidi's second population (= source for half-way)
    first_weight: torch.Tensor  # [L]
    second_weight: torch.Tensor  # [L]
    velocity: torch.Tensor  # [L, D] c_i
    body: torch.Tensor  # [L] index of the body in the batch
    x: torch.Tensor  # [L] streamwise lattice coordinate of the wall crossing, x_f + q c_ix
    q: torch.Tensor  # [L] wall fraction along the link, in (0, 1]

    def __len__(self) -> int:
        return int(self.source.numel())


def wall_fraction(inside: Callable[[np.ndarray], np.ndarray], start: np.ndarray, direction: np.ndarray,
                  steps: int = BISECTION_STEPS) -> np.ndarray:
    """q in (0, 1] where the segment start + t direction enters the body, by bisection of `inside`
    (start is fluid, start + direction solid), vectorised over links."""
    low, high = np.zeros(len(start)), np.ones(len(start))
    for _ in range(steps):
        middle = (low + high) / 2
        solid = np.asarray(inside(start + middle[:, None] * direction), dtype=bool)
        high = np.where(solid, middle, high)
        low = np.where(solid, low, middle)
    return (low + high) / 2


def _shifted(mask: np.ndarray, velocity: np.ndarray, periodic: bool) -> np.ndarray:
    """out[b, x] = mask[b, x + velocity] (False outside the grid unless periodic)."""
    if periodic:
        return np.roll(mask, shift=tuple(-int(v) for v in velocity), axis=tuple(range(1, mask.ndim)))
    out = np.zeros_like(mask)
    destination, source = [slice(None)], [slice(None)]
    for v, n in zip(velocity, mask.shape[1:]):
        destination.append(slice(0, n - 1) if v == 1 else slice(1, n) if v == -1 else slice(None))
        source.append(slice(1, n) if v == 1 else slice(0, n - 1) if v == -1 else slice(None))
    out[tuple(destination)] = mask[tuple(source)]
    return out


def build_links(solid: np.ndarray, fluid: np.ndarray, lattice: Lattice, insides: Sequence[Callable] | None,
                dtype: torch.dtype, device, periodic: bool = False) -> BodyLinks:
    """Links from fluid nodes to solid nodes of each body.

    solid [B, *grid] bool: body nodes. fluid [B, *grid] bool: nodes whose populations are valid
    fluid (not solid, not on a domain face, not a wall row); links start only there.
    insides: one inside function per body for Bouzidi (q by bisection), or None for half-way
    (q = 1/2). Bouzidi falls back to half-way where q < 1/2 and x_f - c_i is not a fluid node.
    periodic: neighbours wrap around every axis (periodic test boxes; streaming must wrap too).
    """
    batch_grid = solid.shape
    n_nodes = int(np.prod(batch_grid))
    parts = []
    for i, velocity in enumerate(lattice.c):
        if not velocity.any():
            continue
        start = np.nonzero(fluid & _shifted(solid, velocity, periodic))
        behind_is_fluid = _shifted(fluid, -velocity, periodic)[start]
        parts.append((i, np.stack(start, axis=1), behind_is_fluid))
    if not parts:
        empty = torch.zeros(0, dtype=torch.long, device=device)
        zeros = torch.zeros(0, dtype=dtype, device=device)
        return BodyLinks(empty, empty, empty, zeros, zeros, torch.zeros(0, lattice.dim, dtype=dtype, device=device),
                         empty, zeros, zeros)
    direction = np.concatenate([np.full(len(p[1]), p[0]) for p in parts])
    index = np.concatenate([p[1] for p in parts])  # [L, 1 + D]: (body, *node)
    behind_is_fluid = np.concatenate([p[2] for p in parts])
    velocity = lattice.c[direction]
    q = np.full(len(direction), 0.5)
    if insides is not None:
        for b, inside in enumerate(insides):
            on_body = index[:, 0] == b
            q[on_body] = wall_fraction(inside, index[on_body, 1:].astype(float), velocity[on_body].astype(float))
    node = np.ravel_multi_index(tuple(index.T), batch_grid)
    behind = np.ravel_multi_index(tuple((index[:, 1:] - velocity).T * behind_is_fluid), batch_grid[1:], mode="wrap")
    behind = index[:, 0] * int(np.prod(batch_grid[1:])) + behind
    opposite = lattice.opposite[direction]
    source, target = direction * n_nodes + node, opposite * n_nodes + node
    near = q < 0.5
    use_behind = near & behind_is_fluid & (insides is not None)
    second = np.where(use_behind, direction * n_nodes + behind, np.where(near, source, target))
    first_weight = np.where(near, np.where(use_behind, 2 * q, 1.0), 1 / (2 * q))
    second_weight = np.where(near, np.where(use_behind, 1 - 2 * q, 0.0), (2 * q - 1) / (2 * q))
    long = lambda a: torch.as_tensor(a, dtype=torch.long, device=device)
    real = lambda a: torch.as_tensor(a, dtype=dtype, device=device)
    return BodyLinks(long(source), long(target), long(second), real(first_weight), real(second_weight),
                     real(velocity), long(index[:, 0]), real(index[:, 1] + q * velocity[:, 0]), real(q))


def bounce_back(post: torch.Tensor, new: torch.Tensor, links: BodyLinks) -> torch.Tensor:
    """Write the reflected populations into new (flat [Q * N]); return per-link momentum exchange
    f_i*(x_f) + f_opp(x_f, t+1), whose product with c_i is the force on the wall."""
    hitting = post.index_select(0, links.source)
    reflected = links.first_weight * hitting + links.second_weight * post.index_select(0, links.second)
    new.index_copy_(0, links.target, reflected)
    return hitting + reflected


def body_forces(exchange: torch.Tensor, links: BodyLinks, n_bodies: int) -> torch.Tensor:
    """[B, D] force on each body from the per-link momentum exchange."""
    forces = torch.zeros(n_bodies, links.velocity.shape[1], dtype=exchange.dtype, device=exchange.device)
    return forces.index_add_(0, links.body, exchange[:, None] * links.velocity)
