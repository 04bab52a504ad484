"""scikit-learn's bundled digits (1797 8x8 images, 10 classes) and the MLP classifiers trained on
them: s_adam §6 (QAT and noisy small-batch), sps_safe §6 P3, limuon §6 optional task."""
from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

# (Q, lo, hi) of fake_quantize (s_adam §5): true 4-bit, and the official CIFAR-100 script's 4 levels
QUANT_4BIT = (7.0, -8, 7)
QUANT_CIFAR100_2BIT = (1.5, -2, 1)

SCALINGS = ("pm1", "standard", "unit")


@dataclass(frozen=True)
class DigitsSplit:
    x_train: torch.Tensor  # [n_train, 64] float32
    y_train: torch.Tensor  # [n_train] int64
    x_test: torch.Tensor
    y_test: torch.Tensor


def digits_split(seed: int, test_fraction: float, scaling: Literal["pm1", "standard", "unit"]) -> DigitsSplit:
    """Stratified split (`random_state = seed`). Scaling: "pm1" = x/16 mapped to [-1, 1]; "unit" = x/16;
    "standard" = standardised with the training split's mean and std (constant pixels keep std 1)."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    if scaling not in SCALINGS:
        raise ValueError(f"scaling: must be one of {SCALINGS}, got {scaling!r}")
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction: must be in (0, 1), got {test_fraction!r}")
    x, y = load_digits(return_X_y=True)
    x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=test_fraction, stratify=y, random_state=seed)
    if scaling == "standard":
        mean, std = x_train.mean(0), x_train.std(0)
        std[std == 0] = 1.0
        x_train, x_test = (x_train - mean) / std, (x_test - mean) / std
    else:
        x_train, x_test = x_train / 16.0, x_test / 16.0
        if scaling == "pm1":
            x_train, x_test = 2 * x_train - 1, 2 * x_test - 1
    return DigitsSplit(torch.from_numpy(x_train.astype(np.float32)), torch.from_numpy(y_train.astype(np.int64)),
                       torch.from_numpy(x_test.astype(np.float32)), torch.from_numpy(y_test.astype(np.int64)))


def noisy_labels(y: torch.Tensor, fraction: float, n_classes: int, generator: torch.Generator) -> torch.Tensor:
    """A copy of y with exactly round(fraction * len(y)) labels, chosen at random, replaced by a
    uniformly random *different* class."""
    if not 0 <= fraction <= 1:
        raise ValueError(f"fraction: must be in [0, 1], got {fraction!r}")
    if n_classes < 2:
        raise ValueError(f"n_classes: must be >= 2 to change a label, got {n_classes!r}")
    count = round(fraction * len(y))
    chosen = torch.randperm(len(y), generator=generator)[:count]
    shift = torch.randint(1, n_classes, (count,), generator=generator)  # 1..n_classes-1: never the same class
    noisy = y.clone()
    noisy[chosen] = (y[chosen] + shift) % n_classes
    return noisy


def fake_quantize(x: torch.Tensor, q: float, lo: int, hi: int) -> torch.Tensor:
    """Per-tensor dynamic fake quantisation: s = q / (max|x| + 1e-5), x_q = clamp(round(s x), lo, hi) / s.
    Backward is the straight-through estimator: the identity, without a clipping mask."""
    scale = q / (x.detach().abs().max() + 1e-5)
    quantized = torch.clamp(torch.round(x.detach() * scale), lo, hi) / scale
    return x + (quantized - x).detach()


class MLP(nn.Module):
    """ReLU MLP with layer sizes `sizes`. With quant = (Q, lo, hi), every Linear weight and the input
    of every Linear but the last are fake-quantised (s_adam §6.1). Weights drawn from `seed` alone."""

    def __init__(self, sizes: tuple[int, ...] = (64, 128, 128, 10), quant: tuple[float, int, int] | None = None,
                 seed: int = 0):
        super().__init__()
        if len(sizes) < 2:
            raise ValueError(f"sizes: needs at least input and output size, got {sizes!r}")
        if quant is not None and len(quant) != 3:
            raise ValueError(f"quant: must be (Q, lo, hi), got {quant!r}")
        self.quant = quant
        generator = torch.Generator().manual_seed(seed)
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in itertools.pairwise(sizes))
        for layer in self.layers:  # torch's default Linear init, drawn from our generator
            bound = 1 / layer.in_features ** 0.5
            nn.init.uniform_(layer.weight, -bound, bound, generator=generator)
            nn.init.uniform_(layer.bias, -bound, bound, generator=generator)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        last = len(self.layers) - 1
        for i, layer in enumerate(self.layers):
            weight = layer.weight
            if self.quant is not None:
                weight = fake_quantize(weight, *self.quant)
                if i < last:
                    x = fake_quantize(x, *self.quant)
            x = F.linear(x, weight, layer.bias)
            if i < last:
                x = F.relu(x)
        return x


@torch.no_grad()
def evaluate_classifier(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> dict:
    """Mean cross-entropy and accuracy of `model` on (x, y)."""
    was_training = model.training
    model.eval()
    logits = model(x)
    model.train(was_training)
    return {"loss": F.cross_entropy(logits, y).item(), "accuracy": (logits.argmax(1) == y).float().mean().item()}


def minibatches(n: int, batch: int, generator: torch.Generator) -> Iterator[torch.Tensor]:
    """Index batches of one shuffled epoch over n samples (the last batch may be smaller)."""
    if batch < 1:
        raise ValueError(f"batch: must be >= 1, got {batch!r}")
    yield from torch.randperm(n, generator=generator).split(batch)


def batch_sampler(n: int, batch: int, generator: torch.Generator):
    """next_batch(step) for run_training: index batches of consecutive shuffled epochs, in call order
    (the step argument is not used; call it once per step, as the loop does)."""
    pending: Iterator[torch.Tensor] = iter(())

    def next_batch(step: int) -> torch.Tensor:
        nonlocal pending
        indices = next(pending, None)
        if indices is None:
            pending = minibatches(n, batch, generator)
            indices = next(pending)
        return indices

    return next_batch


def steps_per_epoch(n: int, batch: int) -> int:
    return -(-n // batch)
