"""Element corruptions of sets at inference time (a batch of same-size sets [N, n, d], numpy, seeded).

- outliers(r): round(r n) random elements of each set replaced by points uniform in an OutlierRegion: a box
  [low, high], or the part of it outside a ball about the origin (held-out outliers, disjoint from a training
  proposal that fills that ball);
- drop(r): a random subset of n - round(r n) elements kept (the sets shrink);
- local_drop(r): the round(r n) elements nearest to a random element of the set (itself included) removed.
The suite is a list of (name, kind, r); `apply` runs one entry, the same way for every method that is compared.
"""
from __future__ import annotations

from typing import Annotated, Literal

import numpy as np
from pydantic import Field, model_validator

from tasks.core.params import LIST_AS_TUPLE, Params

KINDS = ("clean", "outliers", "drop", "local_drop")


class Corruption(Params):
    kind: Literal[KINDS]
    r: float = Field(default=0.0, ge=0, lt=1)

    @property
    def name(self) -> str:
        return "clean" if self.kind == "clean" else f"{self.kind}-{self.r:g}"


def count(n: int, r: float) -> int:
    return int(round(r * n))


class OutlierRegion(Params):
    """Where outliers are drawn: uniform in the box [low, high] (per coordinate), outside the ball of radius
    `outside_radius` about the origin (0: the whole box)."""

    low: Annotated[tuple[float, ...], LIST_AS_TUPLE]
    high: Annotated[tuple[float, ...], LIST_AS_TUPLE]
    outside_radius: float = Field(default=0.0, ge=0)

    @model_validator(mode="after")
    def _not_empty(self):
        if len(self.low) != len(self.high) or any(a >= b for a, b in zip(self.low, self.high)):
            raise ValueError(f"the box [{self.low}, {self.high}] is empty")
        if np.linalg.norm(np.maximum(np.abs(self.low), np.abs(self.high))) <= self.outside_radius:
            raise ValueError(f"the box [{self.low}, {self.high}] lies inside the ball of radius {self.outside_radius}")
        return self

    def sample(self, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
        """Points of the region, shape (*shape, d): one draw of the box when nothing is cut out, else rejection
        in rounds."""
        low, high, d = np.array(self.low), np.array(self.high), len(self.low)
        if self.outside_radius == 0:
            return rng.uniform(low, high, size=(*shape, d))
        wanted = int(np.prod(shape, dtype=int))
        kept = np.empty((0, d))
        while len(kept) < wanted:
            candidates = rng.uniform(low, high, size=(max(64, 4 * (wanted - len(kept))), d))
            kept = np.concatenate([kept, candidates[np.linalg.norm(candidates, axis=1) > self.outside_radius]])
        return kept[:wanted].reshape(*shape, d)


def outliers(X: np.ndarray, r: float, region: OutlierRegion, rng: np.random.Generator) -> np.ndarray:
    """Each set with round(r n) random rows replaced by points drawn uniformly in `region`."""
    N, n, _ = X.shape
    k = count(n, r)
    out = X.copy()
    rows = np.argsort(rng.random((N, n)), axis=1)[:, :k]  # k distinct rows per set
    out[np.arange(N)[:, None], rows] = region.sample((N, k), rng).astype(X.dtype)
    return out


def drop(X: np.ndarray, r: float, rng: np.random.Generator) -> np.ndarray:
    """Each set reduced to a random n - round(r n) of its elements (kept in their original order)."""
    N, n, _ = X.shape
    keep = np.sort(np.argsort(rng.random((N, n)), axis=1)[:, : n - count(n, r)], axis=1)
    return np.take_along_axis(X, keep[..., None], axis=1)


def local_drop(X: np.ndarray, r: float, rng: np.random.Generator) -> np.ndarray:
    """Each set without the round(r n) elements nearest to one random element of it (that element included)."""
    N, n, _ = X.shape
    centres = X[np.arange(N), rng.integers(0, n, size=N)]  # [N, d]
    distances = np.linalg.norm(X - centres[:, None], axis=2)
    keep = np.sort(np.argsort(distances, axis=1, kind="stable")[:, count(n, r):], axis=1)
    return np.take_along_axis(X, keep[..., None], axis=1)


def apply(X: np.ndarray, corruption: Corruption, rng: np.random.Generator, region: OutlierRegion) -> np.ndarray:
    if corruption.kind == "clean":
        return X
    if corruption.kind == "outliers":
        return outliers(X, corruption.r, region, rng)
    if corruption.kind == "drop":
        return drop(X, corruption.r, rng)
    return local_drop(X, corruption.r, rng)


def uniform_ball(shape: tuple[int, ...], dim: int, rng: np.random.Generator) -> np.ndarray:
    """Points uniform in the unit ball of R^dim, shape (*shape, dim)."""
    direction = rng.standard_normal((*shape, dim))
    direction /= np.linalg.norm(direction, axis=-1, keepdims=True)
    return direction * rng.random((*shape, 1)) ** (1.0 / dim)
