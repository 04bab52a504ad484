"""Local training and evaluation on one client's arrays: minibatch SGD with the spec's optimiser (§3.6), an extra
loss term per method, batches drawn from the generator each client-round owns."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .config import FedConfig

# extra(z, logits, x, y) -> (loss term, the part of it to log as the PVDA term)
ExtraLoss = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]


@dataclass(frozen=True)
class ClientData:
    """One client's arrays: train (the federated rounds) and its local test split (the personalised test)."""

    x_train: np.ndarray  # [n, d] float32
    y_train: np.ndarray  # [n] int64
    x_test: np.ndarray
    y_test: np.ndarray

    @property
    def n_train(self) -> int:
        return len(self.y_train)


def train_local(model: nn.Module, x: np.ndarray, y: np.ndarray, cfg: FedConfig, epochs: int,
                generator: torch.Generator, extra: ExtraLoss | None = None) -> float:
    """`epochs` passes of SGD (lr, momentum, weight decay, batch of cfg) on CE + extra; returns the mean extra term."""
    if len(y) == 0 or epochs == 0:
        return 0.0
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    opt = torch.optim.SGD(model.parameters(), lr=cfg.lr, momentum=cfg.momentum, weight_decay=cfg.weight_decay)
    model.train()
    extras = []
    for _ in range(epochs):
        order = torch.randperm(len(yt), generator=generator)
        for start in range(0, len(yt), cfg.batch):
            idx = order[start:start + cfg.batch]
            z, logits = model(xt[idx])
            loss = F.cross_entropy(logits, yt[idx])
            if extra is not None:
                term = extra(z, logits, xt[idx], yt[idx])
                loss = loss + term
                extras.append(float(term.detach()))
            opt.zero_grad()
            loss.backward()
            opt.step()
    return float(np.mean(extras)) if extras else 0.0


@torch.no_grad()
def features(model: nn.Module, x: np.ndarray) -> np.ndarray:
    model.eval()
    return model(torch.from_numpy(x))[0].numpy().astype(np.float64)


@torch.no_grad()
def correct(model: nn.Module, x: np.ndarray, y: np.ndarray) -> int:
    """Number of right predictions (0 on an empty set)."""
    if len(y) == 0:
        return 0
    model.eval()
    return int((model(torch.from_numpy(x))[1].argmax(1).numpy() == y).sum())
