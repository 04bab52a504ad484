"""Testbed C's corpora from the Python standard library (spec §6.3), no download.

The stdlib *.py files (no test folders, no site-packages) split in two halves by a stable hash of the relative
path: pre-training text = the source code of half 1; fine-tuning text = the docstrings (module, class, function)
of half 2 (a shift from code to English prose); its validation (where the grid point is chosen) = the files of
half 2 in one 10% hash bucket, its test split (the numbers reported, never used to choose) = the files of another.
Characters outside the corpus vocabulary become '?' (tasks.train.corpus.encode).
"""
from __future__ import annotations

import ast
import hashlib
import os
import sysconfig
from pathlib import Path

import numpy as np

SKIP_DIRS = {"test", "tests", "idle_test", "site-packages", "__pycache__"}
CORPORA = ("pretrain", "finetune_train", "finetune_val", "finetune_test")
HELD_OUT_BUCKETS = {0: "finetune_val", 1: "finetune_test"}  # of the 10 hash buckets of half 2's files


def _bucket(relative: str, salt: str, buckets: int) -> int:
    return int(hashlib.sha256(f"{salt}:{relative}".encode()).hexdigest(), 16) % buckets


def stdlib_files() -> list[tuple[str, Path]]:
    root = Path(sysconfig.get_paths()["stdlib"])
    files = []
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = [d for d in subfolders if d not in SKIP_DIRS]  # never walk the (large) test trees
        files += [(Path(folder, n).relative_to(root).as_posix(), Path(folder, n)) for n in names if n.endswith(".py")]
    return sorted(files)


def docstrings(source: str) -> list[str]:
    """The module, class and function docstrings of a source file, in order of appearance."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    nodes = [tree] + [n for n in ast.walk(tree) if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))]
    return [d for d in (ast.get_docstring(n) for n in nodes) if d]


def build_corpora(pretrain_chars: int, finetune_chars: int) -> dict[str, str]:
    """{"pretrain", "finetune_train", "finetune_val", "finetune_test"} texts, each capped (files taken in path
    order)."""
    texts = {name: [] for name in CORPORA}
    held_out = max(1, finetune_chars // 9)
    caps = {"pretrain": pretrain_chars, "finetune_train": finetune_chars, "finetune_val": held_out,
            "finetune_test": held_out}
    sizes = dict.fromkeys(texts, 0)
    for relative, path in stdlib_files():
        if all(sizes[k] >= caps[k] for k in texts):
            break
        try:
            source = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if _bucket(relative, "half", 2) == 0:
            key, text = "pretrain", source
        else:
            key = HELD_OUT_BUCKETS.get(_bucket(relative, "val", 10), "finetune_train")
            text = "\n\n".join(docstrings(source))
        if text and sizes[key] < caps[key]:
            texts[key].append(text + "\n\n")
            sizes[key] += len(text) + 2
    return {k: "".join(v)[: caps[k]] for k, v in texts.items()}


def save_corpora(texts: dict[str, str], folder: Path) -> dict:
    """Each text as uint8 ids of the corpus vocabulary (< 98 symbols) in `<name>.bin`; their sizes."""
    from tasks.train.corpus import encode  # torch: here, so that the rest of the module starts without it

    sizes = {}
    for name in CORPORA:
        ids = encode(texts[name]).numpy().astype(np.uint8)
        ids.tofile(folder / f"{name}.bin")
        sizes[f"{name}_chars"] = len(ids)
    return sizes
