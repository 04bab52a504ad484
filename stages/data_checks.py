"""A stage's array inputs checked before it runs: every .npz and .npy among its data deps (files, or files in its
dep folders) must open as numpy wrote it. A truncated or overwritten one would otherwise fail deep in the flow with
numpy's own words ("This file contains pickled (object) data", "File is not a zip file"), naming no file; here it is
one line naming the file and the stage that writes it, to re-run.

The check reads what np.load reads before any array: an .npy's magic and header, an .npz's zip directory and each
member's header; the data themselves are the md5 of input_hashes' business.
"""
from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

from tasks.core.inputs import InputError

from .spec import StageSpec, paper_stages

ARRAY_SUFFIXES = (".npz", ".npy")


class BrokenInput(InputError):
    """A dep an earlier stage wrote that does not open; the message names it and the stage to re-run."""


def check_array_deps(root: Path, spec: StageSpec) -> None:
    """Raise BrokenInput for the first .npz or .npy among the stage's data deps that does not open."""
    for dep in spec.deps:
        if not dep.startswith("data/"):
            continue
        path = root / dep
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else []
        for file in files:
            if file.suffix in ARRAY_SUFFIXES and (problem := array_problem(file)):
                raise BrokenInput(f"{file.relative_to(root)}: {problem}; {rerun(root, spec.paper, dep)}")


def array_problem(path: Path) -> str | None:
    """Why `path` would not load with np.load, None when its headers read."""
    member = None
    try:
        if path.suffix == ".npy":
            with open(path, "rb") as handle:
                _read_header(handle)
            return None
        with zipfile.ZipFile(path) as archive:
            for member in (name for name in archive.namelist() if name.endswith(".npy")):  # np.savez's arrays
                with archive.open(member) as handle:
                    _read_header(handle)
    except (OSError, EOFError, ValueError, zipfile.BadZipFile) as error:  # BadZipFile: no zip, or a cut one
        where = f"its array {member} " if member else ""
        return f"{where}not a readable {path.suffix} ({error})"
    return None


def _read_header(handle) -> None:
    version = np.lib.format.read_magic(handle)  # a ValueError on anything but numpy's magic string
    (np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0)(handle)


def rerun(root: Path, paper: str, dep: str) -> str:
    """How to rewrite a dep: re-run the stage of the paper that writes it."""
    writer = next((s.stage for s in paper_stages(root, paper) if dep in s.outs), None)
    if writer is None:
        return f"restore it (`dvc checkout {dep}`)"
    return f"it is {paper}-{writer}'s output: re-run it (`dvc repro stages/{paper}/dvc.yaml:{paper}-{writer}`)"
