"""What server and clients send each other: flat {name: ndarray} dicts, a model's weights under "w.<parameter>" as
float32 arrays. Flat arrays travel unchanged in process and as Flower ArrayRecords, and their bytes are countable."""
from __future__ import annotations

import numpy as np
import torch
from torch import nn

Message = dict[str, np.ndarray]
WEIGHT_PREFIX = "w."


def get_weights(model: nn.Module) -> dict[str, np.ndarray]:
    return {k: v.detach().cpu().numpy().astype(np.float32, copy=True) for k, v in model.state_dict().items()}


def set_weights(model: nn.Module, weights: dict[str, np.ndarray]) -> nn.Module:
    model.load_state_dict({k: torch.from_numpy(np.array(v, dtype=np.float32)) for k, v in weights.items()})
    return model


def weights_in(message: Message) -> dict[str, np.ndarray]:
    return {k[len(WEIGHT_PREFIX):]: v for k, v in message.items() if k.startswith(WEIGHT_PREFIX)}


def weights_out(weights: dict[str, np.ndarray]) -> Message:
    return {WEIGHT_PREFIX + k: v for k, v in weights.items()}
