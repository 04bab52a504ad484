"""`papers ddsvm fit / predict` as a user runs it: a CSV in, a model file, predictions; bad CSVs refused with
one line naming the culprit (exit 2, no traceback)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from flows.ddsvm.cli import app, class_order
from tasks.core.inputs import InputError
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
