"""`papers ddsvm fit / predict` as a user runs it: a CSV in, a model file, predictions; bad CSVs refused with
one line naming the culprit (exit 2, no traceback)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from flows.ddsvm.cli import app, class_order, holdout_split
from flows.ddsvm.model_io import load_model
from tasks.core.inputs import InputError
from tasks.core.seeding import derive_seed
from tests.conftest import ROOT

PAPERS = str(Path(sys.executable).with_name("papers"))


def papers(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([PAPERS, "ddsvm", *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


def write_csv(path: Path, header: list[str], rows: list[list]) -> Path:
    path.write_text("\n".join(",".join(map(str, row)) for row in [header, *rows]) + "\n")
    return path


def blobs(path: Path, n: int = 60, seed: int = 0) -> Path:
    """Three well separated Gaussian classes in 4 features, class names as text."""
    rng = np.random.default_rng(seed)
    names = ["cat", "dog", "emu"]
    rows = [[*(rng.normal(size=4) + 4 * np.eye(4)[i % 3]).round(4), names[i % 3]] for i in range(n)]
    return write_csv(path, ["a", "b", "c", "d", "kind"], rows)


def refused(*args: str) -> str:
    """The InputError message of an in-process run (`papers` prints it as one line and exits 2)."""
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert isinstance(result.exception, InputError), (result.exception, result.output)
    return str(result.exception)


def run(*args) -> dict:
    """A good run in process (a `papers` process costs seconds of imports): its JSON output."""
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, (result.exception, result.output)
    return json.loads(result.stdout)


def test_fit_and_predict_a_users_csv(tmp_path):
    model = tmp_path / "m.ddsvm.safetensors"
    summary = run("fit", blobs(tmp_path / "train.csv"), "--label", "kind", "--out", model, "--epochs", "30", "--json")
    assert summary["classes"] == 3 and summary["rows"] == 60 and summary["train_accuracy_svm"] == 1.0
    assert (summary["train_rows"], summary["val_rows"]) == (48, 12)  # 20 % of each class's 20 rows held out
    assert summary["val_accuracy_svm"] >= 0.9 and summary["val_accuracy_head"] >= 0.9
    assert summary["margin_min"] > 0 and model.exists()
    predicted = run("predict", model, blobs(tmp_path / "test.csv", seed=1), "--json")
    assert predicted["rows"] == 60 and set(predicted["predictions"]) == {"cat", "dog", "emu"}
    assert predicted["accuracy"] >= 0.95


def test_a_bad_csv_is_one_line_and_exit_2(tmp_path):
    bad = write_csv(tmp_path / "bad.csv", ["a", "y"], [[1, 0], ["x1", 1]])
    done = papers("fit", str(bad), "--label", "y")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().count("\n") == 0 and "row 3, column 'a': 'x1' is not a number" in done.stderr


@pytest.mark.parametrize("rows, label, message", [
    (None, "y", "empty file"),
    ([], "y", "a header but no data rows"),
    ([[1, 2, 0]], "label", "no label column 'label'; the columns are 'a', 'b', 'y'"),
    ([[1, "two", 0]], "y", "row 2, column 'b': 'two' is not a number"),
    ([[1, "nan", 0]], "y", "row 2, column 'b': 'nan' is not finite"),
    ([[1, "inf", 0]], "y", "'inf' is not finite"),
    ([[1, 2, 0], [1, 2]], "y", "row 3 has 2 cells, the header has 3"),
    ([[1, 2, ""]], "y", "row 2, label column 'y': empty label"),
    ([[1, 2, 0], [3, 4, 0]], "y", "holds one class only ('0'); an SVM needs two"),
])
def test_bad_csvs_name_the_culprit(tmp_path, rows, label, message):
    path = tmp_path / "data.csv"
    if rows is None:
        path.write_text("")
    else:
        write_csv(path, ["a", "b", "y"], rows)
    assert message in refused("fit", path, "--label", label, "--out", tmp_path / "m.safetensors")


def test_bad_options_and_files(tmp_path):
    data = blobs(tmp_path / "d.csv")
    out = ["--out", tmp_path / "m.safetensors"]
    assert "--epochs: must be in 1..10,000, got 0" in refused("fit", data, "--label", "kind", "--epochs", "0", *out)
    assert "--eta: must be a finite number > 0, got nan" in refused("fit", data, "--label", "kind", "--eta", "nan", *out)
    assert "--image 2x3: 2 x 3 = 6 pixels, but the CSV has 4 feature columns" in refused(
        "fit", data, "--label", "kind", "--image", "2x3", *out)
    assert "no such file" in refused("fit", tmp_path / "none.csv", "--label", "kind", *out)
    assert "does not exist" in refused("fit", data, "--label", "kind", "--out", tmp_path / "no" / "m.safetensors")
    assert "duplicates" not in refused("fit", write_csv(tmp_path / "dup.csv", ["a", "a", "y"], [[1, 2, 0]]),
                                       "--label", "y", *out)
    assert "not a safetensors file" in refused("predict", data, data)
    assert "--readout: must be one of svm, head" in refused("predict", data, data, "--readout", "max")
    for bad in ("0.6", "-0.1", "nan", "inf"):
        assert f"--val-fraction: must be in [0, 0.5], got {bad}" in refused("fit", data, "--label", "kind",
                                                                           "--val-fraction", bad, *out)


def test_predict_checks_the_feature_columns(tmp_path):
    model = tmp_path / "m.safetensors"
    run("fit", blobs(tmp_path / "d.csv"), "--label", "kind", "--out", model, "--epochs", "2", "--json")
    other = write_csv(tmp_path / "o.csv", ["a", "b", "c", "e"], [[1, 2, 3, 4]])
    assert "missing feature column 'd'" in refused("predict", model, other)
    unlabelled = write_csv(tmp_path / "u.csv", ["a", "b", "c", "d"], [[1, 2, 3, 4], [0, 0, 0, 4]])
    assert "accuracy" not in run("predict", model, unlabelled, "--json")


def test_classes_in_numeric_order_when_numbers():
    assert class_order(["10", "2", "2", "1"]) == ["1", "2", "10"]
    assert class_order(["b", "a", "10"]) == ["10", "a", "b"]


def test_holdout_split_is_stratified_seeded_and_keeps_every_class():
    labels = np.array([0] * 10 + [1] * 5 + [2])
    train, held = holdout_split(labels, 0.2, seed=3)
    assert np.bincount(labels[held], minlength=3).tolist() == [2, 1, 0]  # a class of one row is never held out
    assert sorted([*train, *held]) == list(range(len(labels))) and set(labels[train]) == {0, 1, 2}
    again, _ = holdout_split(labels, 0.2, seed=3)
    assert np.array_equal(train, again) and not np.array_equal(holdout_split(labels, 0.2, seed=4)[1], held)
    assert len(holdout_split(labels, 0.0, seed=3)[1]) == 0


def test_held_out_rows_are_never_trained_on(tmp_path):
    """Changing only the held-out rows leaves the saved model (weights, SVM, scaling) bit for bit as it was."""
    data = blobs(tmp_path / "a.csv")
    lines = data.read_text().splitlines()
    labels = np.array([["cat", "dog", "emu"].index(line.split(",")[-1]) for line in lines[1:]])
    _, held = holdout_split(labels, 0.2, derive_seed(0, "validation"))
    for i in held:
        lines[1 + i] = ",".join(["99"] * 4 + [lines[1 + i].split(",")[-1]])
    other = tmp_path / "b.csv"
    other.write_text("\n".join(lines) + "\n")
    models = [tmp_path / "a.m", tmp_path / "b.m"]
    found = [run("fit", path, "--label", "kind", "--out", model, "--epochs", "3", "--json")
             for path, model in zip((data, other), models)]
    first, second = (load_model(model) for model in models)
    assert all(torch.equal(p, q) for p, q in zip(first.network.state_dict().values(), second.network.state_dict().values()))
    assert np.array_equal(first.svm.weights, second.svm.weights) and np.array_equal(first.arrays["std"], second.arrays["std"])
    assert found[1]["val_accuracy_svm"] < found[0]["val_accuracy_svm"]  # the moved rows are the ones scored


def test_the_model_goes_beside_the_data_not_into_the_working_folder(tmp_path, monkeypatch):
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    (tmp_path / "data").mkdir()
    data = blobs(tmp_path / "data" / "train.csv")
    summary = run("fit", data, "--label", "kind", "--epochs", "2", "--val-fraction", "0", "--json")
    assert summary["model"] == str(tmp_path / "data" / "train.ddsvm.safetensors")
    assert (tmp_path / "data" / "train.ddsvm.safetensors").exists() and list(elsewhere.iterdir()) == []
    assert summary["val_rows"] == 0 and summary["val_accuracy_svm"] is None
    text = CliRunner().invoke(app, ["fit", str(data), "--label", "kind", "--epochs", "1", "--val-fraction", "0",
                                    "--out", str(tmp_path / "again.m")])
    assert text.exit_code == 0 and "no rows held out" in text.stdout
