"""The spec's model (§6): feature extractor 64 -> 128 (ReLU) -> 32, no ReLU on the features, then a linear head."""
from __future__ import annotations

from functools import partial

import torch
from torch import nn

from tasks.core.seeding import derive_seed
from tasks.federated.method import ModelFactory

from .config import FedConfig


class FeatureNet(nn.Module):
    def __init__(self, d_in: int, hidden: int, feature_dim: int, n_classes: int):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, feature_dim))
        self.head = nn.Linear(feature_dim, n_classes)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        z = self.body(x)  # [n, feature_dim]
        return z, self.head(z)  # logits [n, n_classes]


def build(d_in: int, n_classes: int, hidden: int, feature_dim: int, seed: int) -> FeatureNet:
    torch.manual_seed(seed)  # init only; training draws from explicit generators
    return FeatureNet(d_in, hidden, feature_dim, n_classes)


def run_model(cfg: FedConfig, d_in: int, n_classes: int, seed: int) -> ModelFactory:
    """The run's model: one init seed per run, so the server and every client start from the same weights."""
    return partial(build, d_in, n_classes, cfg.hidden, cfg.feature_dim, derive_seed(seed, "init"))
