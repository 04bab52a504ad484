"""A character corpus from Python standard-library sources.

Shipped with every Python, so no download; the text differs across Python versions, which is
why the manifest records the SHA-256 of the text and the interpreter version.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import platform
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

STDLIB_MODULES: tuple[str, ...] = (
    "argparse", "textwrap", "string", "json.decoder", "json.encoder", "collections", "functools", "heapq",
    "bisect", "difflib", "shlex", "csv", "pprint", "calendar", "fractions", "statistics", "random", "typing",
)

UNKNOWN = "?"
# Tab, newline and printable ASCII ' '..'~' are 97 symbols; the spec's vocabulary has 98. The 98th is
# NUL, reserved and never emitted (characters outside the set map to '?', as the spec says), so the
# model's output layer has the spec's size and every id the corpus holds is < 97.
VOCAB: str = "\t\n" + "".join(chr(c) for c in range(ord(" "), ord("~") + 1)) + "\x00"
_INDEX = {ch: i for i, ch in enumerate(VOCAB[:-1])}


def encode(text: str) -> torch.Tensor:
    """Character ids (int64); characters outside the vocabulary become '?'."""
    unknown = _INDEX[UNKNOWN]
    return torch.tensor([_INDEX.get(ch, unknown) for ch in text], dtype=torch.int64)


def decode(ids: torch.Tensor) -> str:
    return "".join(VOCAB[i] for i in ids.tolist())


@dataclass(frozen=True)
class CharCorpus:
    """train/val: int64 character ids (val is the tail of the text); sha256: of the raw text (the
    first n_chars characters, UTF-8, before mapping to the vocabulary)."""

    train: torch.Tensor
    val: torch.Tensor
    sha256: str
    python_version: str
    n_chars: int
    modules: tuple[str, ...]

    def manifest(self) -> dict:
        return {"sha256": self.sha256, "python_version": self.python_version, "n_chars": self.n_chars,
                "n_train": len(self.train), "n_val": len(self.val), "vocab_size": len(VOCAB),
                "modules": list(self.modules)}


def stdlib_text(modules: tuple[str, ...] = STDLIB_MODULES) -> str:
    """The modules' source files, read as UTF-8 and concatenated in the given order."""
    parts = []
    for name in modules:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.origin or not spec.origin.endswith(".py"):
            raise FileNotFoundError(f"stdlib module {name!r} has no Python source file (found {spec and spec.origin!r})")
        parts.append(Path(spec.origin).read_text(encoding="utf-8"))
    return "".join(parts)


def build_stdlib_corpus(n_chars: int, val_fraction: float = 0.1) -> CharCorpus:
    """The first n_chars characters of the stdlib text; the last val_fraction of them is validation."""
    if not 0 < val_fraction < 1:
        raise ValueError(f"val_fraction: must be in (0, 1), got {val_fraction!r}")
    text = stdlib_text()
    if not 2 <= n_chars <= len(text):
        raise ValueError(f"n_chars: must be in [2, {len(text)}] (the length of the stdlib text of Python "
                         f"{platform.python_version()}), got {n_chars!r}")
    text = text[:n_chars]
    ids = encode(text)
    n_val = max(1, round(val_fraction * n_chars))
    return CharCorpus(train=ids[:-n_val], val=ids[-n_val:], sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
                      python_version=platform.python_version(), n_chars=n_chars, modules=STDLIB_MODULES)


def manifest_path(path: Path) -> Path:
    return path.with_name(f"{path.stem}.manifest.json")


def save_corpus(corpus: CharCorpus, path: Path) -> None:
    """`path` (.npz with uint8 ids) and `<stem>.manifest.json` next to it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:  # a file handle keeps numpy from appending a second .npz
        np.savez_compressed(handle, train=corpus.train.numpy().astype(np.uint8), val=corpus.val.numpy().astype(np.uint8))
    manifest_path(path).write_text(json.dumps(corpus.manifest(), indent=2) + "\n")


def load_corpus(path: Path) -> CharCorpus:
    manifest = json.loads(manifest_path(path).read_text())
    with np.load(path) as arrays:
        train, val = (torch.from_numpy(arrays[k].astype(np.int64)) for k in ("train", "val"))
    if len(train) + len(val) != manifest["n_chars"]:
        raise ValueError(f"{path}: holds {len(train) + len(val)} characters, its manifest says n_chars={manifest['n_chars']}")
    return CharCorpus(train=train, val=val, sha256=manifest["sha256"], python_version=manifest["python_version"],
                      n_chars=manifest["n_chars"], modules=tuple(manifest["modules"]))
