"""Local training and evaluation on one client's arrays: minibatch SGD (momentum, weight decay) on CE plus a method's
extra loss term, batches drawn from a generator each client-round owns. Models map x -> (features z, logits)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from tasks.core.seeding import derive_seed

# extra(z, logits, x, y) -> the loss term added to CE on one batch
ExtraLoss = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]


class LocalTraining(Protocol):
    """The settings local training reads: any config with these fields (a paper's run config)."""

    lr: float
    momentum: float
    weight_decay: float
    batch: int
    local_epochs: int  # E, per round
    personal_epochs: int  # E_p, after the last round (fine-tuning, a personal branch)


@dataclass(frozen=True)
class ClientData:
    """One client's arrays: train (the federated rounds), its local test split (the personalised test) and an
    optional validation split it holds back from training (a method's own checks; never a reported accuracy)."""

    x_train: np.ndarray  # [n, d] float32
    y_train: np.ndarray  # [n] int64
    x_test: np.ndarray
    y_test: np.ndarray
    x_val: np.ndarray | None = None
    y_val: np.ndarray | None = None

    @property
    def n_train(self) -> int:
        return len(self.y_train)

    @property
    def n_val(self) -> int:
        return 0 if self.y_val is None else len(self.y_val)


# Each client-round and each client's personalisation own a batch stream, so no run depends on another's draws and
# the global model never depends on a personal branch.
def round_generator(seed: int, client: int, round_: int) -> torch.Generator:
    return torch.Generator().manual_seed(derive_seed(seed, "client", client, round_))


def personal_generator(seed: int, client: int) -> torch.Generator:
    return torch.Generator().manual_seed(derive_seed(seed, "personal", client))


def train_local(model: nn.Module, x: np.ndarray, y: np.ndarray, cfg: LocalTraining, epochs: int,
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


def validation_counts(models: list[nn.Module], data: ClientData) -> dict[str, np.ndarray]:
    """Each candidate model's right predictions on the client's validation split, and the split's size."""
    if data.n_val == 0:
        return {"validation_correct": np.zeros(len(models), np.int64), "validation_n": np.array(0, np.int64)}
    return {"validation_correct": np.array([correct(m, data.x_val, data.y_val) for m in models], np.int64),
            "validation_n": np.array(data.n_val, np.int64)}


def personal_score(model: nn.Module, data: ClientData) -> dict[str, int]:
    """A personalised model's right predictions on the client's local test split, and the split's size."""
    return {"personal_correct": correct(model, data.x_test, data.y_test), "personal_n": int(len(data.y_test))}
