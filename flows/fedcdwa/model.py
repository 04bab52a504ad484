"""The spec's model (§6): feature extractor 64 -> 128 (ReLU) -> 32, no ReLU on the features, then a linear head.
Parameters travel as {name: float32 ndarray}, the form both engines send."""
from __future__ import annotations

import numpy as np
import torch
from torch import nn


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


def get_weights(model: nn.Module) -> dict[str, np.ndarray]:
    return {k: v.detach().cpu().numpy().astype(np.float32, copy=True) for k, v in model.state_dict().items()}


def set_weights(model: nn.Module, weights: dict[str, np.ndarray]) -> nn.Module:
    model.load_state_dict({k: torch.from_numpy(np.array(v, dtype=np.float32)) for k, v in weights.items()})
    return model


def head_of(weights: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    return weights["head.weight"], weights["head.bias"]
