"""One npz per (experiment, instance, seed) holding every method's trace: keys `method.field`."""
from __future__ import annotations

from pathlib import Path

import numpy as np


def save_runs(path: Path, runs: dict[str, dict], **meta) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, **{f"{method}.{field}": value for method, run in runs.items() for field, value in run.items()},
             **{f"meta.{key}": value for key, value in meta.items()})


def load_runs(path: Path) -> tuple[dict[str, dict], dict]:
    runs: dict[str, dict] = {}
    with np.load(path) as data:
        for key in data.files:
            method, field = key.split(".", 1)
            value = data[key]
            runs.setdefault(method, {})[field] = value.item() if value.ndim == 0 else value
    return runs, runs.pop("meta", {})
