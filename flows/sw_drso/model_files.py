"""Trained set classifiers as files: a safetensors file of the state_dict, its JSON metadata beside the tensors
(encoder config, class names, the training sets' size n, and task, method, seed, the outlier region of its test
suite). Reading one runs no code (no pickle). Files written before the training n and the region were stored
still load: `training_n` is None for them and their region is their stored box, whole."""
from __future__ import annotations

import json
from pathlib import Path

from tasks.core.inputs import InputError
from tasks.sets.corruptions import OutlierRegion
from tasks.sets.weighted_encoders import EncoderConfig, WeightedSetClassifier

FORMAT = "sw_drso-classifier-1"
OLD_BOX = [[-1.0] * 3, [1.0] * 3]  # the box of a file that stored none


def save_classifier(path: Path, model: WeightedSetClassifier, classes: list[str], train_n: int, **meta) -> None:
    """`train_n`: the number of elements of every training set (what `papers sw-drso classify` feeds by default)."""
    from safetensors.torch import save_file

    tensors = {key: value.detach().contiguous() for key, value in model.state_dict().items()}
    metadata = {"format": FORMAT, "encoder": json.dumps(model.config.to_json()), "classes": json.dumps(list(classes)),
                "meta": json.dumps({"train_n": int(train_n)} | meta)}
    save_file(tensors, str(path), metadata=metadata)


def training_n(meta: dict) -> int | None:
    """The training sets' size n, None for a file written before it was stored."""
    return meta.get("train_n")


def outlier_region(meta: dict) -> OutlierRegion:
    """The region of the file's test outliers; a file written before regions were stored has its box, whole."""
    if "outliers" in meta:
        return OutlierRegion.model_validate(meta["outliers"])
    low, high = meta.get("box", OLD_BOX)
    return OutlierRegion(low=tuple(low), high=tuple(high))


def load_classifier(path: Path) -> tuple[WeightedSetClassifier, list[str], dict]:
    """The classifier (eval mode), its class names and its metadata; a file of another kind is an InputError."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file, safe_open

    try:
        with safe_open(str(path), framework="pt") as handle:
            metadata = handle.metadata() or {}
        if metadata.get("format") != FORMAT:
            raise InputError(f"--model {path}: not a sw_drso classifier (format {metadata.get('format')!r})")
        model = WeightedSetClassifier(EncoderConfig(**json.loads(metadata["encoder"])))
        model.load_state_dict(load_file(str(path)))
        classes, meta_text = json.loads(metadata["classes"]), metadata["meta"]
    except (SafetensorError, OSError, KeyError, ValueError, RuntimeError) as error:
        if isinstance(error, InputError):
            raise
        raise InputError(f"--model {path}: unreadable classifier file ({type(error).__name__})") from None
    model.eval()
    return model, classes, checked_meta(path, meta_text)


def checked_meta(path: Path, text: str) -> dict:
    """The file's metadata with its training n (when stored) a positive integer and its outlier region valid."""
    from pydantic import ValidationError

    try:
        meta = json.loads(text)
        n = training_n(meta)
        if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n < 1):
            raise ValueError(f"train_n {n!r}")
        outlier_region(meta)
    except (ValueError, TypeError, AttributeError, ValidationError) as error:
        problem = str(error).splitlines()[0][:80] if isinstance(error, ValueError) else type(error).__name__
        raise InputError(f"--model {path}: unreadable classifier metadata ({problem})") from None
    return meta
