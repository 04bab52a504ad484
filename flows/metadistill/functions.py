"""The five shifted training functions of the released code (POM's "cecf2-cecf6"), numpy, minimised.

z = x - bias with bias ~ U(-w/2, w/2) per coordinate (w the domain's width); points are clamped into the box
before evaluation. None of them is a BBOB function: every BBOB function stays unseen.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def f2(z):
    return np.abs(z).sum(axis=1)


def f3(z):
    return np.abs(z[:, :-1] + z[:, 1:]).sum(axis=1) + np.abs(z).sum(axis=1)


def f4(z):
    return 1e-4 * (z ** 2).sum(axis=1)


def f5(z):
    return 0.1 * np.abs(z).max(axis=1)


def f6(z):
    return 1e-9 * (100 * (z[:, :-1] ** 2 - z[:, 1:]) ** 2 + (z[:, :-1] - 1) ** 2).sum(axis=1)


# name -> (function of z, half-width of the box)
TRAINING_FUNCTIONS = {"F2": (f2, 10.0), "F3": (f3, 10.0), "F4": (f4, 100.0), "F5": (f5, 100.0), "F6": (f6, 100.0)}


@dataclass(frozen=True)
class ShiftedFunction:
    """One training function with its bias: callable on a population (N, d)."""

    name: str
    bias: np.ndarray

    @property
    def half_width(self) -> float:
        return TRAINING_FUNCTIONS[self.name][1]

    @property
    def lower(self) -> np.ndarray:
        return np.full(len(self.bias), -self.half_width)

    @property
    def upper(self) -> np.ndarray:
        return np.full(len(self.bias), self.half_width)

    def __call__(self, X: np.ndarray) -> np.ndarray:
        X = np.clip(np.atleast_2d(X), self.lower, self.upper)
        return TRAINING_FUNCTIONS[self.name][0](X - self.bias)


def shifted(name: str, dim: int, rng: np.random.Generator) -> ShiftedFunction:
    """`name` with a fresh bias ~ U(-w/2, w/2)^d (w = 2 x half-width)."""
    half = TRAINING_FUNCTIONS[name][1]
    return ShiftedFunction(name, rng.uniform(-half, half, dim))
