"""Comparison and value oracles over any objective, counting queries (the unit of budget of every method).

The comparison oracle answers "is x worse than y?" as +1 (x worse, y better) or -1. Its noise models:
- exact: the true sign (a tie is a fair coin);
- margin (uniform margin, advantage p in [0, 1/2]): correct with probability 1/2 + p whatever the gap;
  a flip probability q is margin with p = 1/2 - q;
- sqrt_gap: correct with probability 1/2 + min(p_max, sqrt(kappa * |f(x) - f(y)|));
- bradley_terry: y judged better with probability sigmoid((f(x) - f(y)) / tau), i.e. correct with
  probability sigmoid(|gap| / tau).
One uniform draw is taken per answer whatever the model, so a fixed seed gives the same draws for any objective
(the monotone-transform invariance of the margin oracle holds exactly).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np

NoiseKind = Literal["exact", "margin", "sqrt_gap", "bradley_terry"]


@dataclass(frozen=True)
class Noise:
    kind: NoiseKind = "exact"
    p: float = 0.5  # margin: advantage over a coin
    p_max: float = 0.4  # sqrt_gap: the cap of the advantage
    kappa: float = 1.0  # sqrt_gap: scale of the gap
    tau: float = 0.05  # bradley_terry: temperature

    def p_correct(self, gap: np.ndarray) -> np.ndarray:
        """Probability of the correct answer for absolute gaps |f(x) - f(y)| (a tie, gap 0, is a coin)."""
        gap = np.abs(np.asarray(gap, dtype=float))
        if self.kind == "exact":
            advantage = np.full_like(gap, 0.5)
        elif self.kind == "margin":
            advantage = np.full_like(gap, self.p)
        elif self.kind == "sqrt_gap":
            advantage = np.minimum(self.p_max, np.sqrt(self.kappa * gap))
        elif self.kind == "bradley_terry":
            advantage = 0.5 * np.tanh(gap / (2 * self.tau))  # sigmoid(g / tau) - 1/2, without overflow
        else:
            raise ValueError(f"noise kind: must be one of exact, margin, sqrt_gap, bradley_terry, got {self.kind!r}")
        return np.where(gap > 0, 0.5 + advantage, 0.5)


class ComparisonOracle:
    """`worse(x, y)`: +1 where x is judged worse than y, -1 where y is; `queries` counts answered pairs.

    x and y may hold a batch of pairs (leading axes, as the objective evaluates them); each pair of each repeat
    is one query. `reverse` flips every answer: the negative control of the dueling methods.
    """

    def __init__(self, objective: Callable[[np.ndarray], np.ndarray | float], noise: Noise = Noise(),
                 rng: np.random.Generator | None = None, reverse: bool = False):
        self.objective, self.noise, self.reverse = objective, noise, reverse
        self.rng = rng if rng is not None else np.random.default_rng(0)
        self.queries = 0

    def worse(self, x: np.ndarray, y: np.ndarray, repeats: int = 1) -> np.ndarray:
        """Answers of shape (repeats, *batch), or (*batch) when repeats is 1 (a scalar for a single pair)."""
        gap = np.asarray(self.objective(x), dtype=float) - np.asarray(self.objective(y), dtype=float)
        truth = np.where(gap > 0, 1, -1)
        correct = self.rng.random((repeats, *gap.shape)) < self.noise.p_correct(gap)
        answers = np.where(correct, truth, -truth) * (-1 if self.reverse else 1)
        self.queries += repeats * int(gap.size)
        return answers[0] if repeats == 1 else answers


class ValueOracle:
    """Function values for the value-based baselines; `evaluations` counts points evaluated."""

    def __init__(self, objective: Callable[[np.ndarray], np.ndarray | float]):
        self.objective = objective
        self.evaluations = 0

    def __call__(self, x: np.ndarray) -> np.ndarray:
        values = np.asarray(self.objective(x), dtype=float)
        self.evaluations += int(values.size)
        return values
