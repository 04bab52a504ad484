"""A user's table of numeric features as CSV (a header row, one sample per row), as scikit-learn users keep
tabular or flattened-image data: the feature matrix and, when named, one label column of class names.

Every fault is an InputError naming the file, the row (1-based, the header is row 1), the column and the value:
an empty file, a missing label column, a ragged row, a non-numeric or non-finite cell, sizes over the limits
(refused while reading, before the matrix is allocated).
"""
from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tasks.core.inputs import InputError, read_text

MAX_ROWS = 200_000
MAX_COLUMNS = 10_000
MAX_CELLS = 20_000_000
SHOWN_NAMES = 8  # column names listed in an error


@dataclass(frozen=True)
class LabelledTable:
    """features [N, F] float64 (finite), feature_names [F], labels [N] class names (None without a label column)."""

    features: np.ndarray
    feature_names: list[str]
    labels: list[str] | None


def _names(names: list[str]) -> str:
    shown = ", ".join(repr(n) for n in names[:SHOWN_NAMES])
    return shown + (f", ... ({len(names)} in all)" if len(names) > SHOWN_NAMES else "")


def _number(cell: str, where: str) -> float:
    try:
        value = float(cell)
    except ValueError:
        raise InputError(f"{where}: {cell.strip()[:40]!r} is not a number") from None
    if not math.isfinite(value):
        raise InputError(f"{where}: {cell.strip()!r} is not finite (NaN and infinities are refused)")
    return value


def read_labelled_csv(path: Path, label: str | None, what: str = "DATA", label_required: bool = True) -> LabelledTable:
    """The table in `path`. `label`: the label column's name (its cells are class names, kept as text); when
    label_required is False a missing label column is allowed (labels None), as for prediction."""
    text = read_text(path, what)
    where = f"{what} {path}"
    rows = csv.reader(io.StringIO(text))
    try:
        header = [name.strip() for name in next(rows)]
    except StopIteration:
        raise InputError(f"{where}: empty file, expected a header row and one row per sample") from None
    except csv.Error as error:
        raise InputError(f"{where}: row 1 is not valid CSV ({error})") from None
    if len(header) > MAX_COLUMNS:
        raise InputError(f"{where}: {len(header):,} columns is over the limit of {MAX_COLUMNS:,}")
    if "" in header:
        raise InputError(f"{where}: column {header.index('') + 1} of the header has no name")
    if len(set(header)) != len(header):
        twice = next(n for n in header if header.count(n) > 1)
        raise InputError(f"{where}: column name {twice!r} appears twice in the header")
    if label is not None and label not in header and label_required:
        raise InputError(f"{where}: no label column {label!r}; the columns are {_names(header)}")
    label_at = header.index(label) if label in header else None
    feature_at = [i for i in range(len(header)) if i != label_at]
    if not feature_at:
        raise InputError(f"{where}: no feature columns besides the label column {label!r}")
    features, labels = [], []
    try:
        for number, row in enumerate(rows, start=2):
            if not row or all(not cell.strip() for cell in row):
                continue  # a blank line, as a trailing newline leaves
            if len(row) != len(header):
                raise InputError(f"{where}: row {number} has {len(row)} cells, the header has {len(header)}")
            if len(features) >= MAX_ROWS or (len(features) + 1) * len(feature_at) > MAX_CELLS:
                raise InputError(f"{where}: over the limit of {min(MAX_ROWS, MAX_CELLS // len(feature_at)):,} rows "
                                 f"(at most {MAX_CELLS:,} feature cells)")
            features.append([_number(row[i], f"{where}: row {number}, column {header[i]!r}") for i in feature_at])
            if label_at is not None:
                name = row[label_at].strip()
                if not name:
                    raise InputError(f"{where}: row {number}, label column {label!r}: empty label")
                labels.append(name)
    except csv.Error as error:
        raise InputError(f"{where}: not valid CSV ({error})") from None
    if not features:
        raise InputError(f"{where}: a header but no data rows")
    return LabelledTable(np.array(features, dtype=np.float64), [header[i] for i in feature_at],
                         labels if label_at is not None else None)
