"""`papers fedcdwa simulate` as a user meets it: the digits federation and a CSV folder, good and bad inputs."""
from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from flows.fedcdwa.cli import app
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
    ("label,f0,f1,f2,f3\n0.5,1,2,3,4\n", "label"), ("x,f0\n1,2\n", "header"), ("label,f0,f1,f2,f3\n0,a,b,c,d\n", "numeric"),
    ("label,f0,f1\n0,1,2\n", "features"),
])
def test_bad_csv_names_file_and_line(tmp_path, bad, words):
    result = CliRunner().invoke(app, ["simulate", "--data", str(write_split(tmp_path, bad=bad)), *QUICK])
    assert isinstance(result.exception, InputError), result.output
    assert "client_0.csv" in str(result.exception) and words in str(result.exception)
