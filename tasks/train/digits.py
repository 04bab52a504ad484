"""scikit-learn's bundled digits (1797 8x8 images, 10 classes) and the MLP classifiers trained on
them, with or without fake quantisation.

train_classifier is the one runner: an MLP trained by any optimizer factory, with
per-step rows, per-epoch test evaluations and per-epoch wall times; each paper shapes its own record."""
from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from tasks.core.seeding import derive_seed
from tasks.train.loop import run_training

# (Q, lo, hi) of fake_quantize: true 4-bit, and the official CIFAR-100 script's 4 levels
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
    of every Linear but the last are fake-quantised. Weights drawn from `seed` alone."""

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


# (matrices, others) -> the optimizer over them: tasks.optim.registry.optimizer_factory(name, **hyperparameters)
OptimizerFactory = Callable[[list, list], torch.optim.Optimizer]


@dataclass
class ClassifierRun:
    """curve: one row per step (run_training's: step counted over the whole run, loss, lr, grad_evals,
    forward_evals, the optimizer's stats, grad_norm_sq), plus its epoch 1..; evals: the test split's
    loss and accuracy per epoch, epoch 0 (the initial network) included; epoch_wall_time_s: each
    epoch's training time (evaluations excluded)."""

    steps_per_epoch: int
    curve: list[dict] = field(default_factory=list)
    evals: list[dict] = field(default_factory=list)
    epoch_wall_time_s: list[float] = field(default_factory=list)

    def epoch_curve(self, epoch: int) -> list[dict]:
        return [row for row in self.curve if row["epoch"] == epoch]


def train_classifier(split: DigitsSplit, make_optimizer: OptimizerFactory, *, n_classes: int, seed: int, epochs: int,
                     batch: int, hidden: tuple[int, ...], quant: tuple[float, int, int] | None = None,
                     device: str = "cpu") -> ClassifierRun:
    """Train the MLP (inputs, *hidden, n_classes) (fake-quantised with `quant`) on split.x_train,
    split.y_train by cross-entropy for `epochs` epochs of `batch` samples; evaluate on the test split
    before training and after every epoch.

    The weights come from derive_seed(seed, "model") and the shuffling order from
    derive_seed(seed, "shuffle") alone, so every optimizer of a seed starts from the same network and
    sees the same batches. The optimizer is make_optimizer([], parameters): the MLP has no hidden-matrix
    split, every parameter goes to `others` in the model's order (layer by layer, weight then bias),
    which is part of the numbers (S-Adam draws its probes in that order).
    """
    if epochs < 1:
        raise ValueError(f"epochs: must be >= 1, got {epochs!r}")
    x_train = torch.as_tensor(split.x_train, dtype=torch.float32, device=device)
    y_train = torch.as_tensor(split.y_train, dtype=torch.int64, device=device)
    x_test = torch.as_tensor(split.x_test, dtype=torch.float32, device=device)
    y_test = torch.as_tensor(split.y_test, dtype=torch.int64, device=device)
    model = MLP((x_train.shape[1], *hidden, n_classes), quant=quant, seed=derive_seed(seed, "model")).to(device)
    optimizer = make_optimizer([], list(model.parameters()))
    next_batch = batch_sampler(len(x_train), batch, torch.Generator().manual_seed(derive_seed(seed, "shuffle")))

    def loss_on_batch(indices: torch.Tensor) -> torch.Tensor:
        indices = indices.to(device)
        return F.cross_entropy(model(x_train[indices]), y_train[indices])

    def evaluate() -> dict:
        return evaluate_classifier(model, x_test, y_test)

    run = ClassifierRun(steps_per_epoch(len(x_train), batch))
    run.evals.append({"epoch": 0, "step": 0, **evaluate()})
    grad_evals = forward_evals = 0
    for epoch in range(1, epochs + 1):  # one run_training per epoch: its wall time is the epoch's
        offset = (epoch - 1) * run.steps_per_epoch
        result = run_training(optimizer, loss_on_batch, next_batch, run.steps_per_epoch, evaluate=evaluate,
                              record_grad_norm=True)
        run.curve += [row | {"step": offset + row["step"], "epoch": epoch, "grad_evals": grad_evals + row["grad_evals"],
                             "forward_evals": forward_evals + row["forward_evals"]} for row in result.curve]
        run.evals.append({"epoch": epoch, **result.final, "step": offset + result.final["step"]})
        run.epoch_wall_time_s.append(result.wall_time_s)
        grad_evals, forward_evals = grad_evals + result.grad_evals, forward_evals + result.forward_evals
    return run
