"""The spec's federated data (§6): load_digits / 16, a random 25 % global test set, the rest split over K clients
by per-class Dirichlet(alpha), each client's share split 80/20 into local train and local (personalised) test;
or a user's own split: a folder of per-client CSV files."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tasks.core.inputs import InputError, check_count, read_text
from tasks.core.seeding import derive_seed
from tasks.federated.local import ClientData
from tasks.federated.partition import dirichlet_label_split, label_entropy

TEST_FRACTION, LOCAL_TEST_FRACTION = 0.25, 0.2
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
    clients = []
    for part in dirichlet_label_split(y[pool], n_clients, alpha, rng):
        members = pool[rng.permutation(part)]
        n_local_test = int(round(LOCAL_TEST_FRACTION * len(members)))
        clients.append({"train": np.sort(members[n_local_test:]).tolist(), "test": np.sort(members[:n_local_test]).tolist()})
    return {"test": test.tolist(), "clients": clients, "alpha": alpha, "n_clients": n_clients, "seed": seed}


def digits_federation(partition: dict) -> Federation:
    from sklearn.datasets import load_digits

    x, y = load_digits(return_X_y=True)
    x, y = (x / 16.0).astype(np.float32), y.astype(np.int64)
    take = lambda idx: (x[np.asarray(idx, np.int64)], y[np.asarray(idx, np.int64)])  # noqa: E731
    clients = [ClientData(*take(c["train"]), *take(c["test"])) for c in partition["clients"]]
    return Federation(clients, *take(partition["test"]), n_classes=10)


def partition_summary(federation: Federation) -> dict:
    """Per-client class histograms and label entropies (generate stage's metrics)."""
    hist = [np.bincount(c.y_train, minlength=federation.n_classes).tolist() for c in federation.clients]
    entropy = [label_entropy(c.y_train, federation.n_classes) for c in federation.clients]
    return {"histograms": hist, "entropy": entropy, "mean_entropy": float(np.mean(entropy)),
            "empty_clients": int(sum(c.n_train == 0 for c in federation.clients))}


def _read_csv(path: Path, what: str) -> tuple[np.ndarray, np.ndarray]:
    """A CSV with a header whose first column is `label` (integer class ids >= 0), then numeric features."""
    lines = [line for line in read_text(path, what).splitlines() if line.strip()]
    if not lines or lines[0].split(",")[0].strip() != "label":
        raise InputError(f"{what} {path}: the first line must be a header starting with 'label'")
    check_count(f"{what} {path}: rows", len(lines) - 1, MAX_ROWS)
    width = len(lines[0].split(","))
    check_count(f"{what} {path}: features", width - 1, MAX_FEATURES)
    if width < 2:
        raise InputError(f"{what} {path}: no feature columns after 'label'")
    rows = []
    for number, line in enumerate(lines[1:], start=2):
        cells = line.split(",")
        if len(cells) != width:
            raise InputError(f"{what} {path}: line {number} has {len(cells)} columns, the header has {width}")
        try:
            values = [float(v) for v in cells]
        except ValueError:
            raise InputError(f"{what} {path}: line {number} has a non-numeric value") from None
        if not np.all(np.isfinite(values)):
            raise InputError(f"{what} {path}: line {number} has a non-finite value")
        if values[0] != int(values[0]) or values[0] < 0:
            raise InputError(f"{what} {path}: line {number}: label must be an integer >= 0, got {cells[0].strip()}")
        rows.append(values)
    if not rows:
        return np.zeros((0, width - 1), np.float32), np.zeros(0, np.int64)
    array = np.asarray(rows)
    return array[:, 1:].astype(np.float32), array[:, 0].astype(np.int64)


def csv_federation(folder: Path, seed: int) -> Federation:
    """A user's split: FOLDER/client_*.csv (one per client) and FOLDER/test.csv (the global test set), each with
    a header `label,f1,f2,...`. Every client's rows are split 80/20 into local train and local test (seeded)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"--data {folder}: not a folder")
    files = sorted(folder.glob("client_*.csv"))
    if not files:
        raise InputError(f"--data {folder}: no client_*.csv files")
    check_count(f"--data {folder}: clients", len(files), MAX_CLIENTS)
    test_x, test_y = _read_csv(folder / "test.csv", "--data")
    if len(test_y) == 0:
        raise InputError(f"--data {folder / 'test.csv'}: no rows")
    clients, width = [], test_x.shape[1]
    for k, path in enumerate(files):
        x, y = _read_csv(path, "--data")
        if x.shape[1] != width:
            raise InputError(f"--data {path}: {x.shape[1]} features, test.csv has {width}")
        order = np.random.default_rng(derive_seed(seed, "csv", k)).permutation(len(y))
        n_test = int(round(LOCAL_TEST_FRACTION * len(y)))
        tr, te = np.sort(order[n_test:]), np.sort(order[:n_test])
        clients.append(ClientData(x[tr], y[tr], x[te], y[te]))
    n_classes = int(max([test_y.max()] + [c.y_train.max() for c in clients if len(c.y_train)])) + 1
    check_count(f"--data {folder}: classes", n_classes, MAX_CLASSES)
    if sum(c.n_train for c in clients) == 0:
        raise InputError(f"--data {folder}: no client has training rows")
    return Federation(clients, test_x, test_y, n_classes)
