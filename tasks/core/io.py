"""Files: repository root, atomic outputs, JSON, hashing."""
from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


def repo_root(start: Path | None = None) -> Path:
    """The nearest folder at or above `start` (default: cwd) holding `.dvc`."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / ".dvc").is_dir():
            return folder
    raise FileNotFoundError(f"no DVC repository (a folder with .dvc/) at or above {here}")


@contextmanager
def atomic_outputs(targets: list[Path]) -> Iterator[dict[Path, Path]]:
    """Yield a temporary path for each target; move them into place only if the body succeeds.

    DVC takes whatever lies at an output path for a result, so a failing stage must leave
    nothing there: the body writes to the temporary twins, which are renamed at the end
    (same filesystem, so each rename is atomic) or deleted on failure.
    """
    staging = {}
    try:
        for target in targets:
            target.parent.mkdir(parents=True, exist_ok=True)
            staging[target] = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent)) / target.name
        yield staging
        for target, temporary in staging.items():
            if not temporary.exists():
                raise FileNotFoundError(f"stage did not write its declared output {target}")
        for target, temporary in staging.items():
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            elif target.exists() or target.is_symlink():
                target.unlink()
            os.replace(temporary, target)
    finally:
        for temporary in staging.values():
            shutil.rmtree(temporary.parent, ignore_errors=True)


def write_json(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, sort_keys=False, default=jsonable) + "\n")


def write_csv(path: Path, rows: list[dict]) -> None:
    """Rows as CSV; the header is every key in order of first appearance (missing cells empty)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(dict.fromkeys(key for row in rows for key in row)))
        writer.writeheader()
        writer.writerows(rows)


def jsonable(value):
    """JSON for numpy scalars and arrays and paths (json.dumps(default=jsonable))."""
    import numpy as np  # here: `papers` commands load this module and must start without numpy

    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, complex):
        return [value.real, value.imag]
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def file_md5(path: Path) -> str:
    digest = hashlib.md5()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def path_md5(path: Path) -> str:
    """The md5 DVC records for a path in dvc.lock: a file's md5, or for a folder the md5 of the JSON
    listing of its files' (md5, relpath) as DVC writes it, plus '.dir'. __pycache__ is left out, as the
    project's .dvcignore does."""
    if path.is_file():
        return file_md5(path)
    listing = sorted(({"md5": file_md5(p), "relpath": p.relative_to(path).as_posix()} for p in path.rglob("*")
                      if p.is_file() and "__pycache__" not in p.parts), key=lambda entry: entry["relpath"])
    return hashlib.md5(json.dumps(listing, sort_keys=True).encode()).hexdigest() + ".dir"
