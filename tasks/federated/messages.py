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


CANDIDATE_PREFIX = "candidate{}."  # several models in one message: candidate0.w.<parameter>, candidate1.w.<...>


def candidates_out(candidates: list[dict[str, np.ndarray]]) -> Message:
    """Several weight dicts as one flat message (a server asking its clients to score each)."""
    return {CANDIDATE_PREFIX.format(i) + k: v for i, weights in enumerate(candidates)
            for k, v in weights_out(weights).items()}


def candidates_in(message: Message) -> list[dict[str, np.ndarray]]:
    found = []
    while any(k.startswith(CANDIDATE_PREFIX.format(len(found))) for k in message):
        prefix = CANDIDATE_PREFIX.format(len(found))
        found.append(weights_in({k[len(prefix):]: v for k, v in message.items() if k.startswith(prefix)}))
    return found
