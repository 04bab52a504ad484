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

from flows.sw_drso.model_files import load_classifier, save_classifier
from tasks.core.inputs import InputError
from tasks.sets.weighted_encoders import EncoderConfig, WeightedSetClassifier
from tests.conftest import ROOT

PAPERS = str(Path(sys.executable).with_name("papers"))
CLASSES = ["box", "icosphere", "cylinder", "cone", "torus"]


def papers(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([PAPERS, "sw-drso", "classify", *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def model_file(tmp_path_factory) -> Path:
    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("model") / "classifier.safetensors"
    save_classifier(path, WeightedSetClassifier(EncoderConfig(pooling="attention", dim=3, classes=5, hidden=16)), CLASSES,
                    task="A", method="sw_drso", seed=0, box=[[-1.0] * 3, [1.0] * 3])
    return path


def test_model_file_round_trip(model_file, tmp_path):
    model, classes, meta = load_classifier(model_file)
    assert classes == CLASSES and meta["method"] == "sw_drso" and model.config.pooling == "attention"
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
