"""One pipeline run of ddsvm: a method trained on one paired split (k, seed) of the digits or of the generated depth
images, saved with its log, and its test errors and training-feature margins measured from the saved model."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from tasks.core.io import write_json
from tasks.train.depth_images import depth_images
from tasks.train.few_shot import digit_images
from tasks.train.linear_svm import own_class_margins

from .model import Architecture
from .model_io import load_model, save_model
from .params import SHAPES, MethodParams, Sweep, Training
from .training import TrainConfig, normalized_features, predict, train_network

N_CLASSES = 10
SHAPES_FILE = "shapes.npz"  # the generated depth images, beside the splits that index them


def run_label(method: str, sweep: Sweep, seed_index: int) -> str:
    return f"{method}_{sweep.tag()}_s{seed_index}"


def make_shapes(folder: Path, per_class: int, seed: int) -> int:
    """Render the depth image set into folder/SHAPES_FILE (x [N, 1, 32, 32] float32, y); returns N."""
    x, y = depth_images(per_class, seed)
    np.savez(folder / SHAPES_FILE, x=x, y=y)
    return len(y)


def labels(data: str, splits: Path) -> np.ndarray:
    """The labels of `data`'s images (the depth images' read from `splits`)."""
    if data == SHAPES:
        with np.load(splits / SHAPES_FILE) as saved:
            return saved["y"]
    return digit_images()[1]


def images(data: str, splits: Path, upsample: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The digits as [N, 1, 8 u, 8 u] (bilinear enlargement for u > 1), or the depth images in `splits` as made
    ([N, 1, 32, 32]), and their labels."""
    if data == SHAPES:
        with np.load(splits / SHAPES_FILE) as saved:
            return torch.from_numpy(saved["x"]), torch.from_numpy(saved["y"])
    x, y = digit_images()
    x = torch.from_numpy(x)
    if upsample > 1:
        x = F.interpolate(x, scale_factor=upsample, mode="bilinear", align_corners=False)
    return x, torch.from_numpy(y)


def architecture(training: Training, method: MethodParams, image_shape: tuple[int, ...]) -> Architecture:
    return Architecture(training.backbone, image_shape, training.feature_dim, N_CLASSES,
                        head="cosine" if method.loss == "cosine" else "linear", width=training.width,
                        cosine_scale=training.cosine_scale)


def train_config(training: Training, method: MethodParams, epochs: int) -> TrainConfig:
    return TrainConfig(loss=method.loss, epochs=epochs, lr=training.lr, weight_decay=training.weight_decay,
                       lam=method.lam, eta=method.eta, option=method.option, only_violators=method.only_violators,
                       svm_C=training.svm_C, refit_every=method.refit_every, augment_shift=training.augment_shift)


def train_run(split_path: Path, folder: Path, label: str, method: MethodParams, training: Training, sweep: Sweep,
              seed: int, device: str) -> dict:
    """Train one method on the split's training images of the sweep's data; writes {label}.safetensors and
    {label}.json (log)."""
    with np.load(split_path) as split:
        train = torch.from_numpy(split["train"])
    x, y = images(sweep.data, split_path.parent, training.upsample)
    config = train_config(training, method, sweep.epochs or training.epochs)
    result = train_network(x[train], y[train], architecture(training, method, tuple(x.shape[1:])), config, seed,
                           device)
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
