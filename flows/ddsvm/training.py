"""DDSVM's alternating loop (spec §3.1) and its baselines, one trainer for all: the loss names the method.

- "ce": cross-entropy on the linear head; "cosine": cross-entropy on the cosine head (normalised softmax);
- "ddsvm": every `refit_every` epochs the OvR linear SVM is refitted on the normalised training features
  (eval mode, no augmentation, weights frozen), then each step minimises CE + lam * L_push (push.py) against
  that fixed SVM.
Every method ends with one SVM fitted on its final normalised training features: the `svm` read-out (for CE
that is the static hybrid "CE + post-hoc SVM").
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Literal

import numpy as np
import torch
import torch.nn.functional as F

from tasks.core.seeding import derive_seed
from tasks.train.linear_svm import LinearSVM, fit_ovr_svm, own_class_margins

from .model import Architecture, Network, build_network
from .push import Option, push_loss

LOSSES = ("ce", "cosine", "ddsvm")
FEATURE_BATCH = 4096  # rows per forward pass when features are extracted


@dataclass(frozen=True)
class TrainConfig:
    """batch 0: full batch; augment_shift s > 0: images shifted as a batch by a random (dx, dy) in {-s..s}^2."""

    loss: Literal["ce", "cosine", "ddsvm"]
    epochs: int
    lr: float = 1e-3
    weight_decay: float = 5e-4
    lam: float = 1.0
    eta: float = 0.1
    option: Option = "A"
    only_violators: bool = False
    svm_C: float = 1.0
    refit_every: int = 1
    batch: int = 0
    augment_shift: int = 1

    def head(self) -> str:
        return "cosine" if self.loss == "cosine" else "linear"

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class TrainResult:
    """log: one row per epoch (loss, ce, push; at a refit the SVM's train accuracy and own-class margins);
    wall_time_s: the training loop alone (refits included, the final read-out SVM not)."""

    network: Network
    svm: LinearSVM
    wall_time_s: float
    log: list[dict] = field(default_factory=list)


@torch.no_grad()
def eval_outputs(network: Network, x: torch.Tensor) -> tuple[np.ndarray, torch.Tensor]:
    """(u = z / |z| [N, D] float64, logits [N, C]) from one forward pass in eval mode (the mode is put back)."""
    was_training = network.training
    network.eval()
    outputs = [network(chunk) for chunk in x.split(FEATURE_BATCH)]
    network.train(was_training)
    u = torch.cat([F.normalize(z, dim=1) for z, _ in outputs]).double().cpu().numpy()
    return u, torch.cat([logits for _, logits in outputs])


def normalized_features(network: Network, x: torch.Tensor) -> np.ndarray:
    """u = z / |z| [N, D] float64, in eval mode."""
    return eval_outputs(network, x)[0]


def predict(network: Network, svm: LinearSVM, x: torch.Tensor) -> dict[str, np.ndarray]:
    """Class indices of both read-outs, from one forward pass: `head` (argmax of the logits) and `svm` (the SVM
    on u)."""
    u, logits = eval_outputs(network, x)
    return {"head": logits.argmax(1).cpu().numpy(), "svm": svm.predict(u)}


def shift_batch(x: torch.Tensor, shift: int, generator: torch.Generator) -> torch.Tensor:
    """The whole batch rolled by one random integer (dx, dy) in {-shift..shift}^2."""
    dx, dy = torch.randint(-shift, shift + 1, (2,), generator=generator).tolist()
    return torch.roll(x, shifts=(dy, dx), dims=(2, 3))


def svm_state(network: Network, x: torch.Tensor, labels: np.ndarray, n_classes: int, C: float) -> tuple[LinearSVM, dict]:
    """The SVM on the current normalised features and what it says of them: train accuracy, own-class margins."""
    u = normalized_features(network, x)
    svm = fit_ovr_svm(u, labels, n_classes, C=C)
    margins = own_class_margins(u, labels, svm)
    return svm, {"svm_train_accuracy": float((svm.predict(u) == labels).mean()), "margin_min": float(margins.min()),
                 "margin_mean": float(margins.mean()), "svm_converged": svm.converged}


def train_network(x: torch.Tensor, y: torch.Tensor, architecture: Architecture, config: TrainConfig, seed: int,
                  device: str = "cpu") -> TrainResult:
    """Train on (x, y): weights from derive_seed(seed, "init"), batches and shifts from derive_seed(seed, "batches"),
    so every method of a seed starts from the same backbone and sees the same batches. SVM refits use a fixed
    random_state and draw from no torch generator (lam = 0 gives CE's run bit for bit)."""
    if config.loss not in LOSSES:
        raise ValueError(f"loss: must be one of {LOSSES}, got {config.loss!r}")
    if config.head() != architecture.head:
        raise ValueError(f"architecture.head: loss {config.loss!r} needs the {config.head()!r} head")
    x, y = x.to(device), y.to(device)
    labels = y.cpu().numpy()
    network = build_network(architecture, derive_seed(seed, "init")).to(device)
    optimizer = torch.optim.Adam(network.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    generator = torch.Generator().manual_seed(derive_seed(seed, "batches"))
    batch = config.batch or len(x)
    shift = config.augment_shift if x.ndim == 4 else 0
    W = b = None
    log = []
    start = time.perf_counter()
    for epoch in range(config.epochs):
        row: dict = {"epoch": epoch}
        if config.loss == "ddsvm" and epoch % config.refit_every == 0:
            svm, stats = svm_state(network, x, labels, architecture.n_classes, config.svm_C)
            W, b = (torch.as_tensor(a, dtype=torch.float32, device=device) for a in (svm.weights, svm.biases))
            row |= stats
        network.train()
        sums = {"loss": 0.0, "ce": 0.0, "push": 0.0}
        order = torch.randperm(len(x), generator=generator).split(batch)
        for indices in order:
            xb = x[indices.to(device)]
            if shift:
                xb = shift_batch(xb, shift, generator)
            z, logits = network(xb)
            ce = F.cross_entropy(logits, y[indices.to(device)])
            loss = ce
            if config.loss == "ddsvm":
                push = push_loss(F.normalize(z, dim=1), y[indices.to(device)], W, b, config.eta, config.option,
                                 config.only_violators)
                loss = ce + config.lam * push
                sums["push"] += push.item()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            sums["loss"] += loss.item()
            sums["ce"] += ce.item()
        log.append(row | {key: value / len(order) for key, value in sums.items()})
    wall_time_s = time.perf_counter() - start
    svm, stats = svm_state(network, x, labels, architecture.n_classes, config.svm_C)
    log[-1] |= {f"final_{key}": value for key, value in stats.items()}
    return TrainResult(network, svm, wall_time_s, log)
