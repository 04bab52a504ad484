"""Files: repository root, atomic outputs (a stage's, a user's), JSON, hashing."""
from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from tasks.core.inputs import InputError, check_replaceable
from tasks.core.private import current_umask


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


@contextmanager
def staged_output(path: Path, what: str, failures: tuple[type[Exception], ...] = (OSError,)) -> Iterator[Path]:
    """Yield a new temporary file beside the user's output `path` for the command's own writer to fill; on
    success, rename it onto `path` (after check_output(path, what) passed, before any work).

    The user's path itself is never opened, so a symbolic link planted there is never followed, and a
    failed write leaves an existing file as it was. A body that removes the temporary file writes
    nothing (it had nothing to write). A failure of the write (`failures`: OSError, or the wrapper a
    writer puts around one, e.g. safetensors' SafetensorError) is an InputError of one line,
    `--out PATH: could not write (No space left on device)`; the temporary file never outlives the call.
    """
    path = Path(path)
    try:
        with _temporary_twin(path) as temporary:
            yield temporary
            if os.path.lexists(temporary):
                check_replaceable(path, what)  # again: another user may have planted a link since check_output
                # rename(2) replaces the directory entry itself: a link planted after the check above is
                # replaced, never followed, so that race cannot redirect the write.
                os.replace(temporary, path)
    except failures as error:
        raise InputError(f"{what} {path}: could not write ({_reason(error)})") from None


@contextmanager
def _temporary_twin(path: Path) -> Iterator[Path]:
    """An empty file of ours in `path`'s folder (mkstemp: O_EXCL, so it follows nothing), ending in `path`'s
    suffix (writers go by it: trimesh picks the format, np.save appends .npy to a name without it),
    with the mode `path` gets (mkstemp makes 0600); removed on leaving if still there."""
    handle, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix, dir=path.parent)
    try:
        os.fchmod(handle, _output_mode(path))
    finally:
        os.close(handle)
    try:
        yield Path(name)
    finally:
        Path(name).unlink(missing_ok=True)


def _output_mode(path: Path) -> int:
    """The permissions writing `path` in place would leave: an existing file's own (a user who made it
    private keeps it so), else those of a new file, 0o666 less the umask."""
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        status = None
    if status is not None and stat.S_ISREG(status.st_mode):
        return stat.S_IMODE(status.st_mode) & 0o777
    return 0o666 & ~current_umask()


def _reason(error: Exception) -> str:
    """An error's cause on one line: an OSError's strerror ("No space left on device"), else its text."""
    text = error.strerror if isinstance(error, OSError) and error.strerror else str(error) or type(error).__name__
    return " ".join(text.split())


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
