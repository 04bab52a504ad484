"""Accuracy of a trained classifier on the test-time corruption suite (spec §6): every corruption of the
suite drawn once per seed (generator 1000 + seed, one stream per entry), the same corrupted sets for every
method of that seed; corrupted sets are fed unweighted (uniform), whatever their size."""
from __future__ import annotations

import numpy as np
import torch

from tasks.sets.corruptions import Corruption, OutlierRegion, apply

CHUNK = 512  # sets per forward pass


def corruption_rng(seed: int, index: int) -> np.random.Generator:
    return np.random.default_rng([1000 + seed, index])


def corrupted_suite(X: np.ndarray, suite: list[Corruption], seed: int, region: OutlierRegion) -> dict[str, np.ndarray]:
    return {c.name: apply(X, c, corruption_rng(seed, i), region) for i, c in enumerate(suite)}


@torch.no_grad()
def predict_proba(model, X: np.ndarray) -> np.ndarray:
    return np.concatenate([torch.softmax(model(torch.from_numpy(np.ascontiguousarray(chunk, dtype=np.float32))), 1).numpy()
                           for chunk in np.array_split(X, max(1, -(-len(X) // CHUNK)))])


def suite_accuracy(model, sets: dict[str, np.ndarray], y: np.ndarray) -> dict[str, float]:
    """name -> accuracy, plus mCA: the mean over the corrupted entries (every one but clean)."""
    accuracy = {name: float((predict_proba(model, X).argmax(1) == y).mean()) for name, X in sets.items()}
    corrupted = [value for name, value in accuracy.items() if name != "clean"]
    return accuracy | {"mCA": float(np.mean(corrupted))}
