"""Comparison-only search in the ambient space, vectorised over independent chains (axis 0 of x).

- `ncrs`: noisy-comparison random search: y = x + alpha s with s ~ N(0, I), accept y when the comparison says it
  is better; with votes m the same pair is compared m times and the majority decides (ties reject); two-sided
  compares x + alpha s with x - alpha s first, then the winner with x.
- `dueling_ngd`: Euclidean dueling normalized gradient descent (Saha, Koren, Mansour): u uniform on the unit
  sphere of the ambient space, o = O(x + nu u, x - nu u), x <- x - eta o u; with `project` each probe and each
  iterate are mapped back onto a manifold (the geometry-blind baseline of the Riemannian methods).
Each chain may have its own step (alpha, eta of shape (chains,)), so a step grid runs as one batch.
"""
from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from .oracles import ComparisonOracle
from .trace import Recorder, Result, notify


def _per_chain(value, x: np.ndarray) -> np.ndarray:
    """A scalar or one value per chain, shaped to broadcast against x (chains, ...)."""
    return np.asarray(value, dtype=float).reshape((-1,) + (1,) * (x.ndim - 1))


def gaussian(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.standard_normal(shape)


def ncrs(oracle: ComparisonOracle, x0: np.ndarray, alpha, budget: int, rng: np.random.Generator, votes: int = 1,
         two_sided: bool = False, record: Recorder | None = None,
         sample: Callable[[np.random.Generator, tuple], np.ndarray] = gaussian) -> Result:
    """Run until `budget` comparisons per chain; never past it (an iteration costs votes, or 2 votes two-sided).
    x0: (chains, d). Directions are Gaussian (so A^T s ~ N(0, I_k) whatever d); `sample` may draw them otherwise."""
    start = time.perf_counter()
    x, step = np.array(x0, dtype=float), _per_chain(alpha, x0)
    per_iteration = votes * (2 if two_sided else 1)
    used = 0
    notify(record, x, 0)
    iterations = budget // per_iteration
    for _ in range(iterations):
        s = sample(rng, x.shape)
        y = x + step * s
        if two_sided:  # the better of x + alpha s and x - alpha s is the candidate
            minus = x - step * s
            y = np.where(_majority(oracle.worse(y, minus, votes), votes)[:, None], minus, y)
        accepted = _majority(oracle.worse(x, y, votes), votes)
        x = np.where(accepted[:, None], y, x)
        used += per_iteration
        if notify(record, x, used, candidate=y, accepted=accepted):
            break
    return Result(x, used // per_iteration, used, time.perf_counter() - start)


def _majority(answers: np.ndarray, votes: int) -> np.ndarray:
    """True where the second point won the vote (answers +1: the first is worse); a tie rejects."""
    return (answers if votes == 1 else answers.sum(axis=0)) > 0


def unit_ambient(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Directions uniform on the unit sphere of R^(shape[1:]), one per chain."""
    u = rng.standard_normal(shape)
    return u / np.linalg.norm(u.reshape(shape[0], -1), axis=1).reshape((-1,) + (1,) * (len(shape) - 1))


def dueling_ngd(oracle: ComparisonOracle, x0: np.ndarray, eta, nu: float, budget: int, rng: np.random.Generator,
                project: Callable[[np.ndarray], np.ndarray] | None = None,
                sample: Callable[[np.random.Generator, tuple], np.ndarray] = unit_ambient,
                record: Recorder | None = None) -> Result:
    """`eta`: a step per chain, or a schedule t -> step. One comparison per iteration, `budget` iterations."""
    start = time.perf_counter()
    x = np.array(x0, dtype=float)
    back = project or (lambda y: y)
    notify(record, x, 0)
    t = 0
    for t in range(1, budget + 1):
        u = sample(rng, x.shape)
        o = oracle.worse(back(x + nu * u), back(x - nu * u))
        step = eta(t - 1) if callable(eta) else _per_chain(eta, x)
        x = back(x - step * _per_chain(o, x) * u)
        if notify(record, x, t):
            break
    return Result(x, t, t, time.perf_counter() - start)
