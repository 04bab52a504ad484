"""One pipeline run of ddsvm: a method trained on one paired split (k, seed) of the digits, saved with its log,
and its test errors and training-feature margins measured from the saved model."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from tasks.core.io import write_json
from tasks.train.few_shot import digit_images
from tasks.train.linear_svm import own_class_margins

from .model import Architecture
from .model_io import load_model, save_model
from .params import MethodParams, Training
from .training import TrainConfig, normalized_features, predict, train_network

N_CLASSES = 10


def run_label(method: str, k: int, seed_index: int) -> str:
    return f"{method}_k{k}_s{seed_index}"


def images(upsample: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The digits as [N, 1, 8 u, 8 u] (bilinear enlargement for u > 1) and their labels."""
    x, y = digit_images()
    x = torch.from_numpy(x)
    if upsample > 1:
        x = F.interpolate(x, scale_factor=upsample, mode="bilinear", align_corners=False)
    return x, torch.from_numpy(y)


def architecture(training: Training, method: MethodParams) -> Architecture:
    side = 8 * training.upsample
    return Architecture(training.backbone, (1, side, side), training.feature_dim, N_CLASSES,
                        head="cosine" if method.loss == "cosine" else "linear", width=training.width,
                        cosine_scale=training.cosine_scale)


def train_config(training: Training, method: MethodParams) -> TrainConfig:
    return TrainConfig(loss=method.loss, epochs=training.epochs, lr=training.lr, weight_decay=training.weight_decay,
                       lam=method.lam, eta=method.eta, option=method.option, only_violators=method.only_violators,
                       svm_C=training.svm_C, refit_every=method.refit_every, augment_shift=training.augment_shift)


def train_run(split_path: Path, folder: Path, label: str, method: MethodParams, training: Training, seed: int,
              device: str) -> dict:
    """Train one method on the split's training images; writes {label}.safetensors and {label}.json (log)."""
    with np.load(split_path) as split:
        train = torch.from_numpy(split["train"])
    x, y = images(training.upsample)
    config = train_config(training, method)
    result = train_network(x[train], y[train], architecture(training, method), config, seed, device)
    save_model(folder / f"{label}.safetensors", result.network, result.svm, info={"config": config.to_dict()})
    write_json(folder / f"{label}.json", {"label": label, "wall_time_s": result.wall_time_s, "seed": seed,
                                          "config": config.to_dict(), "log": result.log})
    return {"label": label, "wall_time_s": result.wall_time_s}


def evaluate_run(split_path: Path, models: Path, label: str, x: torch.Tensor, y: torch.Tensor) -> dict:
    """Test error (%) of both read-outs and the own-class geometric margins of the training features (final SVM)."""
    saved = load_model(models / f"{label}.safetensors")
    record = json.loads((models / f"{label}.json").read_text())
    with np.load(split_path) as split:
        train, test = split["train"], split["test"]
    predicted = predict(saved.network, saved.svm, x[test])
    margins = own_class_margins(normalized_features(saved.network, x[train]), y[train].numpy(), saved.svm)
    truth = y[test].numpy()
    return {"head_error": 100 * float((predicted["head"] != truth).mean()),
            "svm_error": 100 * float((predicted["svm"] != truth).mean()),
            "margin_min": float(margins.min()), "margin_mean": float(margins.mean()),
            "wall_time_s": record["wall_time_s"], "n_train": len(train), "n_test": len(test), "log": record["log"]}
