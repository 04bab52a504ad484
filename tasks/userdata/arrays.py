"""A user's numeric array from .npy (shape read from the header before any data) or .csv (numbers separated by
commas or whitespace, one row per line): shape, size and finiteness checked, an InputError naming the file else."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from tasks.core.inputs import InputError, check_readable

MAX_ELEMENTS = 50_000_000  # 400 MB of float64: the largest array a command reads


def _npy(path: Path, what: str, max_elements: int) -> np.ndarray:
    try:
        header = np.load(path, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError, EOFError) as error:
        raise InputError(f"{what} {path}: not a readable .npy file ({str(error).splitlines()[0]})") from None
    if not isinstance(header, np.ndarray):
        raise InputError(f"{what} {path}: holds several arrays (.npz); give one array as .npy")
    if header.size > max_elements:
        raise InputError(f"{what} {path}: {header.size:,} values is over the limit of {max_elements:,}")
    if header.dtype.kind not in "biuf":
        raise InputError(f"{what} {path}: dtype {header.dtype} is not numeric (expected float or int)")
    return np.array(header, dtype=np.float64)


def _csv(path: Path, what: str, max_elements: int) -> np.ndarray:
    rows = []
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        fields = line.replace(",", " ").split()
        if not fields or fields[0].startswith("#"):
            continue
        try:
            rows.append([float(field) for field in fields])
        except ValueError:
            raise InputError(f"{what} {path}: line {number} is not numbers: {line[:60]!r}") from None
        if len(rows) * len(rows[0]) > max_elements:
            raise InputError(f"{what} {path}: over the limit of {max_elements:,} values")
    if not rows:
        raise InputError(f"{what} {path}: no numbers in the file")
    widths = {len(row) for row in rows}
    if len(widths) != 1:
        raise InputError(f"{what} {path}: rows have different lengths {sorted(widths)}")
    array = np.array(rows)
    return array[:, 0] if array.shape[1] == 1 else array


def read_array(path: Path, what: str, ndim: tuple[int, ...] = (1, 2), max_elements: int = MAX_ELEMENTS) -> np.ndarray:
    """The float64 array of a .npy or .csv file, refused unless its number of dimensions is in `ndim` and every value
    is finite."""
    path = check_readable(Path(path), what)
    suffix = path.suffix.lower()
    if suffix == ".npy":
        array = _npy(path, what, max_elements)
    elif suffix in (".csv", ".txt"):
        array = _csv(path, what, max_elements)
    else:
        raise InputError(f"{what} {path}: unknown format {suffix or '(none)'!r}; expected .npy or .csv")
    if array.ndim not in ndim:
        raise InputError(f"{what} {path}: {array.ndim}-D array of shape {array.shape}, expected {' or '.join(map(str, ndim))}-D")
    if array.size == 0:
        raise InputError(f"{what} {path}: empty array")
    if not np.isfinite(array).all():
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(array))[0])
        raise InputError(f"{what} {path}: non-finite value {array[bad]} at index {bad}")
    return array
