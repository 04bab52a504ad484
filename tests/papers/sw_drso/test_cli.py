"""`papers sw-drso classify` as a user runs it: a good cloud in each format, and hostile inputs (exit 2, one line)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import trimesh

from click.testing import Result
from typer.testing import CliRunner

from flows.sw_drso.cli import app
from flows.sw_drso.model_files import load_classifier, outlier_region, save_classifier, training_n
from tasks.core.inputs import InputError
from tasks.sets.corruptions import OutlierRegion
from tasks.sets.weighted_encoders import EncoderConfig, WeightedSetClassifier
from tests.conftest import ROOT

PAPERS = str(Path(sys.executable).with_name("papers"))
CLASSES = ["box", "icosphere", "cylinder", "cone", "torus"]
TRAIN_N = 40


def papers(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([PAPERS, "sw-drso", "classify", *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def model_file(tmp_path_factory) -> Path:
    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("model") / "classifier.safetensors"
    save_classifier(path, WeightedSetClassifier(EncoderConfig(pooling="attention", dim=3, classes=5, hidden=16)), CLASSES,
                    train_n=TRAIN_N, task="A", method="sw_drso", seed=0,
                    outliers=OutlierRegion(low=(-1.0,) * 3, high=(1.0,) * 3, outside_radius=1.0).model_dump())
    return path


def rewritten(model_file: Path, path: Path, change) -> Path:
    """A copy of the model file whose metadata `change(meta)` edited (a file of an older writer, a forged one)."""
    from safetensors.torch import load_file, safe_open, save_file

    with safe_open(str(model_file), framework="pt") as handle:
        metadata = handle.metadata()
    meta = json.loads(metadata["meta"])
    change(meta)
    save_file(load_file(str(model_file)), str(path), metadata=metadata | {"meta": json.dumps(meta)})
    return path


def as_before_train_n(meta: dict) -> None:
    """The metadata the writer stored before the training n and the outlier region: a box."""
    del meta["train_n"], meta["outliers"]
    meta["box"] = [[-1.0] * 3, [1.0] * 3]


def classify(*args) -> Result:
    return CliRunner().invoke(app, [str(a) for a in args])


def test_model_file_round_trip(model_file, tmp_path):
    model, classes, meta = load_classifier(model_file)
    assert classes == CLASSES and meta["method"] == "sw_drso" and model.config.pooling == "attention"
    assert training_n(meta) == TRAIN_N and outlier_region(meta).outside_radius == 1.0
    old = load_classifier(rewritten(model_file, tmp_path / "old.safetensors", as_before_train_n))[2]
    assert training_n(old) is None and outlier_region(old) == OutlierRegion(low=(-1.0,) * 3, high=(1.0,) * 3)
    X = torch.randn(2, 10, 3)
    again, _, _ = load_classifier(model_file)
    assert torch.equal(model(X), again(X))
    from safetensors.torch import save_file

    save_file({"w": torch.zeros(2)}, str(tmp_path / "other.safetensors"))
    with pytest.raises(InputError, match="not a sw_drso classifier"):
        load_classifier(tmp_path / "other.safetensors")


@pytest.mark.heavy  # a child process that loads the model and classifies: ~3 s (the hostile inputs stay)
def test_classify_a_mesh_and_its_corruptions(model_file, tmp_path):
    trimesh.creation.torus(major_radius=0.7, minor_radius=0.2).export(tmp_path / "torus.stl")
    done = papers(str(tmp_path / "torus.stl"), "--model", str(model_file), "--corrupt", "0.3", "--sample", "256", "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["class"] in CLASSES and 0 < summary["probability"] <= 1 and summary["points"] == 256
    assert set(summary["corruptions"]) == {"outliers-0.3", "drop-0.3", "local_drop-0.3"}
    assert summary["corruptions"]["drop-0.3"]["points"] == 256 - 77
    assert done.stderr.strip() == "--sample 256: the classifier was trained on sets of 40 points; it sees 256 here"


def test_the_training_n_is_the_default_sample(model_file, tmp_path):
    trimesh.creation.box().export(tmp_path / "box.stl")
    np.save(tmp_path / "big.npy", np.random.default_rng(0).normal(size=(500, 3)))
    np.save(tmp_path / "small.npy", np.random.default_rng(0).normal(size=(12, 3)))
    for cloud, points in (("box.stl", TRAIN_N), ("big.npy", TRAIN_N), ("small.npy", 12)):
        done = classify(tmp_path / cloud, "--model", model_file, "--json")
        assert done.exit_code == 0 and done.stderr == "", (done.exception, done.stderr)
        summary = json.loads(done.stdout)
        assert summary["points"] == points and summary["train_n"] == TRAIN_N
    same = classify(tmp_path / "big.npy", "--model", model_file, "--sample", str(TRAIN_N), "--json")
    assert same.stderr == "" and json.loads(same.stdout)["points"] == TRAIN_N  # no line when nothing is overridden


def test_an_old_model_file_needs_sample_and_a_forged_n_is_refused(model_file, tmp_path):
    old = rewritten(model_file, tmp_path / "old.safetensors", as_before_train_n)
    np.save(tmp_path / "cloud.npy", np.random.default_rng(0).normal(size=(100, 3)))
    refused = classify(tmp_path / "cloud.npy", "--model", old)
    assert isinstance(refused.exception, InputError)
    assert "predates the stored training set size; pass --sample N" in str(refused.exception)
    done = classify(tmp_path / "cloud.npy", "--model", old, "--sample", "64", "--json")
    assert done.exit_code == 0 and json.loads(done.stdout)["points"] == 64 and json.loads(done.stdout)["train_n"] is None
    for forged in (0, "64", 2.5, True):
        path = rewritten(model_file, tmp_path / "forged.safetensors", lambda meta, n=forged: meta.update(train_n=n))
        with pytest.raises(InputError, match=r"unreadable classifier metadata \(train_n"):
            load_classifier(path)
    path = rewritten(model_file, tmp_path / "region.safetensors", lambda meta: meta.update(outliers={"low": [0]}))
    with pytest.raises(InputError, match="unreadable classifier metadata"):
        load_classifier(path)


@pytest.mark.slow
def test_classify_is_deterministic_and_reads_text_clouds(model_file, tmp_path):
    trimesh.creation.torus(major_radius=0.7, minor_radius=0.2).export(tmp_path / "torus.obj")
    args = (str(tmp_path / "torus.obj"), "--model", str(model_file), "--sample", "256", "--json")
    assert papers(*args).stdout == papers(*args).stdout  # seeded sampling and corruptions: the same numbers
    np.savetxt(tmp_path / "cloud.xyz", np.random.default_rng(0).normal(size=(40, 3)))
    text = papers(str(tmp_path / "cloud.xyz"), "--model", str(model_file))
    assert text.returncode == 0 and "from 40 points" in text.stdout


@pytest.mark.parametrize("args, message", [
    (["cloud.xyz", "--corrupt", "1.5"], "--corrupt: must be in [0, 1), got 1.5"),
    (["cloud.xyz", "--sample", "0"], "--sample: must be in 1..100,000, got 0"),
    (["nan.xyz"], "point 1 is not finite"),
    pytest.param(["missing.ply"], "no such file", marks=pytest.mark.slow),
    pytest.param(["cloud.xyz", "--model", "nothing.safetensors"], "nothing.safetensors: no such file",
                 marks=pytest.mark.slow),
    pytest.param(["cloud.xyz", "--model", "cloud.xyz"], "unreadable classifier file", marks=pytest.mark.slow),
])
def test_hostile_input_is_one_line_and_exit_2(model_file, tmp_path, args, message):
    np.savetxt(tmp_path / "cloud.xyz", np.ones((5, 3)))
    (tmp_path / "nan.xyz").write_text("0 0 0\n0 nan 0\n")
    args = [str(tmp_path / a) if a.endswith((".xyz", ".ply", ".safetensors")) and "/" not in a else a for a in args]
    if "--model" not in args:
        args += ["--model", str(model_file)]
    done = papers(*args)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
