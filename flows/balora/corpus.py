"""Testbed C's corpora from the Python standard library (spec §6.3), no download.

The stdlib *.py files (no test folders, no site-packages) split in two halves by a stable hash of the relative
path: pre-training text = the source code of half 1; fine-tuning text = the docstrings (module, class, function)
of half 2 (a shift from code to English prose); its validation = the files of half 2 whose hash puts them in 10%.
Characters outside the corpus vocabulary become '?' (tasks.train.corpus.encode).
"""
from __future__ import annotations

import ast
import hashlib
import sysconfig
from pathlib import Path

SKIP_DIRS = {"test", "tests", "idle_test", "site-packages", "__pycache__"}


def _bucket(relative: str, salt: str, buckets: int) -> int:
    return int(hashlib.sha256(f"{salt}:{relative}".encode()).hexdigest(), 16) % buckets


def stdlib_files() -> list[tuple[str, Path]]:
    root = Path(sysconfig.get_paths()["stdlib"])
    files = [(p.relative_to(root).as_posix(), p) for p in root.rglob("*.py")
             if not SKIP_DIRS & set(p.relative_to(root).parts[:-1])]
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
    """{"pretrain", "finetune_train", "finetune_val"} texts, each capped (files taken in path order)."""
    texts = {"pretrain": [], "finetune_train": [], "finetune_val": []}
    caps = {"pretrain": pretrain_chars, "finetune_train": finetune_chars, "finetune_val": max(1, finetune_chars // 9)}
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
            key = "finetune_val" if _bucket(relative, "val", 10) == 0 else "finetune_train"
            text = "\n\n".join(docstrings(source))
        if text and sizes[key] < caps[key]:
            texts[key].append(text + "\n\n")
            sizes[key] += len(text) + 2
    return {k: "".join(v)[: caps[k]] for k, v in texts.items()}
