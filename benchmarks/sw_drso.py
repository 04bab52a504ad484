"""SW-DRSO's price: one training step of every method (ERM, Aug, Random-weights, SW-DRSO) at the default
profile's sizes (batch 64, n 64, attention encoder, T = 3), as ratios to ERM; and inference cost against set
size (n = 64 .. 4096) for every weighted encoder. CPU, one torch thread, medians of repeats, fresh weights
(timing does not depend on them), real trimesh clouds.
"""
from __future__ import annotations

import timeit

import numpy as np
import torch

from flows.sw_drso.params import Params
from flows.sw_drso.training import METHODS, TrainConfig, train_classifier
from tasks.core.device import single_torch_thread
from tasks.core.params import load_paper_params
from tasks.sets.primitive_clouds import CLASSES, primitive_clouds
from tasks.sets.weighted_encoders import POOLINGS, EncoderConfig, WeightedSetClassifier

from .common import ROOT, write_result

REPEATS = 5
SIZES = (64, 256, 1024, 4096)
INFERENCE_BATCH = 64


def median_seconds(action, repeats: int = REPEATS) -> float:
    """Median wall time of `action` over `repeats` calls, after one warm-up call."""
    return float(np.median(timeit.repeat(action, number=1, repeat=repeats + 1)[1:]))


def step_costs(params: Params) -> dict[str, float]:
    """Seconds per training step of each method: one epoch of exactly one batch, timed end to end."""
    X, y = primitive_clouds(CLASSES[: params.task_a.classes], params.batch // params.task_a.classes + 1,
                            params.task_a.n, seed=0)
    X, y = X[: params.batch], y[: params.batch]
    encoder = EncoderConfig(pooling="attention", dim=3, classes=params.task_a.classes, hidden=params.hidden)
    return {method: median_seconds(lambda m=method: train_classifier(
        X, y, encoder, TrainConfig(method=m, epochs=1, batch=params.batch, lr=params.lr, **params.method.model_dump()), 0))
            for method in METHODS}


@torch.no_grad()
def inference_costs(params: Params) -> dict[str, dict[int, float]]:
    """Seconds per set of a forward pass over INFERENCE_BATCH sets of each size, per encoder."""
    costs = {}
    for pooling in POOLINGS:
        torch.manual_seed(0)
        encoder = EncoderConfig(pooling=pooling, dim=3, classes=params.task_a.classes, hidden=params.hidden)
        model = WeightedSetClassifier(encoder).eval()
        costs[pooling] = {}
        for n in SIZES:
            X = torch.from_numpy(np.random.default_rng(n).normal(size=(INFERENCE_BATCH, n, 3)).astype(np.float32))
            costs[pooling][n] = median_seconds(lambda: model(X)) / INFERENCE_BATCH
    return costs


def main() -> dict:
    single_torch_thread()
    params = load_paper_params(ROOT, "sw_drso", "default", Params)
    steps = step_costs(params)
    inference = inference_costs(params)
    growth = {pooling: costs[SIZES[-1]] / costs[SIZES[0]] for pooling, costs in inference.items()}
    result = {"settings": {"batch": params.batch, "n": params.task_a.n, "encoder": "attention", "hidden": params.hidden,
                           "ascent_steps": params.method.ascent_steps, "threads": torch.get_num_threads(),
                           "repeats": REPEATS, "inference_batch": INFERENCE_BATCH},
              "train_step_s": steps, "train_step_vs_erm": {m: s / steps["erm"] for m, s in steps.items()},
              "inference_s_per_set": {p: {str(n): s for n, s in c.items()} for p, c in inference.items()},
              "inference_growth_n4096_vs_n64": growth,
              "note": "wall times on a shared, loaded 2-core machine; the ratios are the comparable numbers"}
    write_result("sw_drso", result)
    return result


if __name__ == "__main__":
    import json

    print(json.dumps(main(), indent=2))
