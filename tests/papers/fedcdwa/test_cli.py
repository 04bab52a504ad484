"""`papers fedcdwa simulate` as a user meets it: the digits federation and a CSV folder, good and bad inputs."""
from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from flows.fedcdwa.cli import app
from flows.fedcdwa.data import csv_federation
from tasks.core.inputs import InputError

QUICK = ["--rounds", "1", "--local-epochs", "1"]


def test_simulate_json():
    result = CliRunner().invoke(app, ["simulate", "--clients", "3", "--alpha", "0.5", *QUICK, "--json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["method"] == "fedcdwa" and doc["clients"] == 3 and 0 <= doc["global_accuracy"] <= 1
    assert doc["bytes_up_per_round"] > 0


def write_split(folder, rows_per_client=(30, 25), bad: str | None = None):
    rng = np.random.default_rng(0)
    header = "label," + ",".join(f"f{i}" for i in range(4))
    for k, n in enumerate(rows_per_client):
        lines = [header] + [f"{rng.integers(0, 3)}," + ",".join(f"{v:.3f}" for v in rng.normal(size=4)) for _ in range(n)]
        (folder / f"client_{k}.csv").write_text("\n".join(lines) + "\n")
    test = [header] + [f"{c}," + ",".join(f"{v:.3f}" for v in rng.normal(size=4)) for c in (0, 1, 2) * 5]
    (folder / "test.csv").write_text("\n".join(test) + "\n")
    if bad is not None:
        (folder / "client_0.csv").write_text(bad)
    return folder


def test_simulate_csv_folder(tmp_path):
    result = CliRunner().invoke(app, ["simulate", "--data", str(write_split(tmp_path)), *QUICK, "--json",
                                      "--method", "fedavg"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["clients"] == 2 and doc["alpha"] is None and 0 <= doc["personal_accuracy"] <= 1


@pytest.mark.parametrize("args, culprit", [
    (["--alpha", "nan"], "--alpha"), (["--alpha", "-1"], "--alpha"), (["--alpha", "inf"], "--alpha"),
    (["--clients", "0"], "--clients"), (["--clients", "100000"], "--clients"), (["--rounds", "0"], "--rounds"),
    (["--method", "fedsgd"], "--method"), (["--engine", "ray"], "--engine"), (["--seed", "-3"], "--seed"),
    (["--engine", "flower", "--clients", "500"], "--clients"), (["--data", "/no/such/folder"], "--data"),
])
def test_bad_options_name_the_culprit(args, culprit):
    result = CliRunner().invoke(app, ["simulate", *args])
    assert isinstance(result.exception, InputError) and culprit in str(result.exception), result.output


@pytest.mark.parametrize("bad, words", [
    ("label,f0,f1,f2,f3\n0,1,2,3\n", "columns"), ("label,f0,f1,f2,f3\n0,1,2,nan,4\n", "non-finite"),
    ("label,f0,f1,f2,f3\n ,1,2,3,4\n", "empty label"), ("x,f0\n1,2\n", "header"), ("label,f0,f1,f2,f3\n0,a,b,c,d\n", "numeric"),
    ("label,f0,f1\n0,1,2\n", "features"),
])
def test_bad_csv_names_file_and_line(tmp_path, bad, words):
    result = CliRunner().invoke(app, ["simulate", "--data", str(write_split(tmp_path, bad=bad)), *QUICK])
    assert isinstance(result.exception, InputError), result.output
    assert "client_0.csv" in str(result.exception) and words in str(result.exception)


def write_clients(folder, clients: dict[str, list[str]], test: list[str], header: str = "label,f0,f1"):
    for name, rows in clients.items():
        (folder / f"{name}.csv").write_text("\n".join([header, *rows]) + "\n")
    (folder / "test.csv").write_text("\n".join([header, *test]) + "\n")
    return folder


def test_client_files_in_natural_order(tmp_path):  # client_2 before client_10, whatever the text order says
    rows = {f"client_{k}": [f"0,{k},0"] * (10 + k) for k in (10, 2, 1)}
    federation = csv_federation(write_clients(tmp_path, rows, ["0,0,0"]), seed=0)
    sizes = [c.n_train + c.n_val + len(c.y_test) for c in federation.clients]
    assert sizes == [11, 12, 20]
    assert [float(c.x_train[0, 0]) for c in federation.clients] == [1.0, 2.0, 10.0]


def test_labels_become_dense_sorted_classes(tmp_path):
    sparse = csv_federation(write_clients(tmp_path, {"client_0": ["10,1,1", "2,0,0"] * 5}, ["100,1,0", "2,0,1"]), 0)
    assert sparse.n_classes == 3  # 2, 10, 100: no phantom classes 0..99
    assert sorted(sparse.test_y.tolist()) == [0, 2]  # numeric order: 2 -> 0, 10 -> 1, 100 -> 2
    named = csv_federation(write_clients(tmp_path, {"client_0": ["dog,1,1", "cat,0,0"] * 5}, ["cat,1,0", "emu,0,1"]), 0)
    assert named.n_classes == 3 and named.test_y.tolist() == [0, 2]  # cat, dog, emu: text order


def test_quoted_csv_fields(tmp_path):
    header = '"label","f0","f1"'
    rows = ['"big, red",1.5,"2"', '"small",0,0'] * 4
    federation = csv_federation(write_clients(tmp_path, {"client_0": rows}, ['"small","1",1'], header), 0)
    assert federation.n_classes == 2 and federation.d_in == 2
    client = federation.clients[0]
    everything = np.concatenate([client.x_train, client.x_val, client.x_test])
    assert sorted(map(tuple, everything.tolist())).count((1.5, 2.0)) == 4


def test_every_client_holds_train_validation_and_test_rows(tmp_path):
    federation = csv_federation(write_clients(tmp_path, {"client_0": ["0,1,1", "1,0,0"] * 10}, ["0,0,0"]), 0)
    client = federation.clients[0]
    assert (client.n_train, client.n_val, len(client.y_test)) == (14, 2, 4)
