"""The spec's federated data (§6): load_digits / 16, a random 25 % global test set, the rest split over K clients
by per-class Dirichlet(alpha), each client's share split 70/10/20 into local train, a validation split the client
holds back (spec §11: carved from the clients' training data; the server-step gate reads it) and local
(personalised) test; or a user's own split: a folder of per-client CSV files, split the same way."""
from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tasks.core.inputs import InputError, check_count, read_text
from tasks.core.seeding import derive_seed
from tasks.federated.local import ClientData
from tasks.federated.partition import dirichlet_label_split, label_entropy

TEST_FRACTION, LOCAL_TEST_FRACTION, VALIDATION_FRACTION = 0.25, 0.2, 0.1  # the last two: of a client's share
MAX_CLIENTS, MAX_ROWS, MAX_FEATURES, MAX_CLASSES = 1000, 1_000_000, 4096, 1000


@dataclass(frozen=True)
class Federation:
    clients: list[ClientData]
    test_x: np.ndarray  # the global (balanced) test set, held by the server
    test_y: np.ndarray
    n_classes: int

    @property
    def d_in(self) -> int:
        return self.test_x.shape[1]


def digits_partition(n_clients: int, alpha: float, seed: int) -> dict:
    """Index lists into load_digits: {"test": [...], "clients": [{"train": [...], "test": [...]}, ...]}."""
    from sklearn.datasets import load_digits

    y = load_digits().target
    rng = np.random.default_rng(derive_seed(seed, "partition", n_clients, alpha))
    order = rng.permutation(len(y))
    n_test = int(round(TEST_FRACTION * len(y)))
    test, pool = np.sort(order[:n_test]), np.sort(order[n_test:])
    clients = [local_split(pool[rng.permutation(part)]) for part in dirichlet_label_split(y[pool], n_clients, alpha, rng)]
    return {"test": test.tolist(), "clients": clients, "alpha": alpha, "n_clients": n_clients, "seed": seed}


def local_split(members: np.ndarray) -> dict[str, list[int]]:
    """A client's shuffled rows as {"test": the first 20 %, "val": the next 10 %, "train": the rest}, each sorted."""
    n_test, n_val = (int(round(share * len(members))) for share in (LOCAL_TEST_FRACTION, VALIDATION_FRACTION))
    parts = np.split(np.asarray(members, np.int64), [n_test, n_test + n_val])
    return {name: np.sort(part).tolist() for name, part in zip(("test", "val", "train"), parts)}


def digits_federation(partition: dict) -> Federation:
    from sklearn.datasets import load_digits

    x, y = load_digits(return_X_y=True)
    x, y = (x / 16.0).astype(np.float32), y.astype(np.int64)
    take = lambda idx: (x[np.asarray(idx, np.int64)], y[np.asarray(idx, np.int64)])  # noqa: E731
    clients = [ClientData(*take(c["train"]), *take(c["test"]), *take(c["val"])) for c in partition["clients"]]
    return Federation(clients, *take(partition["test"]), n_classes=10)


def partition_summary(federation: Federation) -> dict:
    """Per-client class histograms and label entropies (generate stage's metrics)."""
    hist = [np.bincount(c.y_train, minlength=federation.n_classes).tolist() for c in federation.clients]
    entropy = [label_entropy(c.y_train, federation.n_classes) for c in federation.clients]
    return {"histograms": hist, "entropy": entropy, "mean_entropy": float(np.mean(entropy)),
            "empty_clients": int(sum(c.n_train == 0 for c in federation.clients))}


def natural_key(path: Path) -> list:
    """client_2.csv before client_10.csv: digit runs compare as numbers."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", path.name)]


def _rows(path: Path, what: str) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """(header, [(line number, cells)] of the data rows) of a CSV file read with the csv module (quoted fields,
    commas and line breaks inside quotes); blank lines skipped; the header's first column must be `label`."""
    reader = csv.reader(io.StringIO(read_text(path, what), newline=""))
    table = []
    try:
        for cells in reader:
            if any(cell.strip() for cell in cells):
                table.append((reader.line_num, cells))
    except csv.Error as error:
        raise InputError(f"{what} {path}: not CSV at line {reader.line_num} ({error})") from None
    if not table or table[0][1][0].strip() != "label":
        raise InputError(f"{what} {path}: the first line must be a header starting with 'label'")
    header = table[0][1]
    check_count(f"{what} {path}: rows", len(table) - 1, MAX_ROWS)
    check_count(f"{what} {path}: features", len(header) - 1, MAX_FEATURES)
    if len(header) < 2:
        raise InputError(f"{what} {path}: no feature columns after 'label'")
    return header, table[1:]


def _read_csv(path: Path, what: str) -> tuple[np.ndarray, list[str]]:
    """(features [n, d] float32, labels as written): a CSV whose header starts with `label`, then numeric features.
    A label is any text (a class name or an id), stripped of surrounding spaces."""
    header, rows = _rows(path, what)
    features, labels = [], []
    for number, cells in rows:
        if len(cells) != len(header):
            raise InputError(f"{what} {path}: line {number} has {len(cells)} columns, the header has {len(header)}")
        label = cells[0].strip()
        if not label:
            raise InputError(f"{what} {path}: line {number} has an empty label")
        try:
            values = [float(v) for v in cells[1:]]
        except ValueError:
            raise InputError(f"{what} {path}: line {number} has a non-numeric value") from None
        if not np.all(np.isfinite(values)):
            raise InputError(f"{what} {path}: line {number} has a non-finite value")
        features.append(values)
        labels.append(label)
    return np.asarray(features, np.float32).reshape(len(rows), len(header) - 1), labels


def class_index(labels: list[str]) -> dict[str, int]:
    """Every distinct label -> a dense class index 0..C-1: numeric order when every label is an integer ("2" < "10"),
    text order otherwise. No index is left unused, whatever ids the file spells."""
    distinct = set(labels)
    numeric = all(re.fullmatch(r"[+-]?\d+", label) for label in distinct)
    return {label: i for i, label in enumerate(sorted(distinct, key=(lambda v: (int(v), v)) if numeric else None))}


def csv_federation(folder: Path, seed: int) -> Federation:
    """A user's split: FOLDER/client_*.csv (one per client, in natural order: client_2 before client_10) and
    FOLDER/test.csv (the global test set), each with a header `label,f1,f2,...`. Labels are mapped to dense class
    indices (class_index) over all files together. Every client's rows are split 70/10/20 (seeded) into local
    train, validation and local test."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"--data {folder}: not a folder")
    files = sorted(folder.glob("client_*.csv"), key=natural_key)
    if not files:
        raise InputError(f"--data {folder}: no client_*.csv files")
    check_count(f"--data {folder}: clients", len(files), MAX_CLIENTS)
    test_x, test_labels = _read_csv(folder / "test.csv", "--data")
    if not test_labels:
        raise InputError(f"--data {folder / 'test.csv'}: no rows")
    width = test_x.shape[1]
    read = []
    for path in files:
        x, labels = _read_csv(path, "--data")
        if x.shape[1] != width:
            raise InputError(f"--data {path}: {x.shape[1]} features, test.csv has {width}")
        read.append((x, labels))
    if sum(len(labels) for _, labels in read) == 0:
        raise InputError(f"--data {folder}: no client has training rows")
    index = class_index(test_labels + [label for _, labels in read for label in labels])
    check_count(f"--data {folder}: classes", len(index), MAX_CLASSES)
    as_ids = lambda labels: np.array([index[label] for label in labels], np.int64)  # noqa: E731
    clients = []
    for k, (x, labels) in enumerate(read):
        parts = local_split(np.random.default_rng(derive_seed(seed, "csv", k)).permutation(len(labels)))
        y = as_ids(labels)
        take = lambda name: (x[parts[name]], y[parts[name]])  # noqa: E731
        clients.append(ClientData(*take("train"), *take("test"), *take("val")))
    return Federation(clients, test_x, as_ids(test_labels), len(index))
