"""Trained set classifiers as files: a safetensors file of the state_dict, its JSON metadata beside the tensors
(encoder config, class names, task, method, seed). Reading one runs no code (no pickle)."""
from __future__ import annotations

import json
from pathlib import Path

from tasks.core.inputs import InputError
from tasks.sets.weighted_encoders import EncoderConfig, WeightedSetClassifier

FORMAT = "sw_drso-classifier-1"


def save_classifier(path: Path, model: WeightedSetClassifier, classes: list[str], **meta) -> None:
    from safetensors.torch import save_file

    tensors = {key: value.detach().contiguous() for key, value in model.state_dict().items()}
    metadata = {"format": FORMAT, "encoder": json.dumps(model.config.to_json()), "classes": json.dumps(list(classes)),
                "meta": json.dumps(meta)}
    save_file(tensors, str(path), metadata=metadata)


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
    except (SafetensorError, OSError, KeyError, ValueError, RuntimeError) as error:
        if isinstance(error, InputError):
            raise
        raise InputError(f"--model {path}: unreadable classifier file ({type(error).__name__})") from None
    model.eval()
    return model, json.loads(metadata["classes"]), json.loads(metadata["meta"])
