"""A sweep of the generated depth images (`data: shapes`) through the pipeline's pieces: the image set beside the
splits, a run trained for the sweep's own epochs on 32x32 inputs (the digits' upsample left out), its evaluation
and plots; the digits keep their file names and seeds from before the depth images came."""
from __future__ import annotations

import json

import numpy as np
import pytest

from flows.ddsvm import plots
from flows.ddsvm.experiments import evaluate_run, images, labels, make_shapes, run_label, train_run
from flows.ddsvm.model_io import load_model
from flows.ddsvm.params import MethodParams, Sweep, Training
from flows.ddsvm.pipeline import run_seed, split_name
from tasks.core.seeding import derive_seed
from tasks.train.depth_images import CLASSES
from tasks.train.few_shot import per_class_split

TRAINING = Training(epochs=50, lr=1e-3, weight_decay=0.0, svm_C=1.0, feature_dim=8, width=2, cosine_scale=10.0,
                    augment_shift=1, upsample=4)


@pytest.mark.heavy
def test_a_depth_image_run_trains_for_its_sweeps_epochs_and_evaluates(tmp_path):
    splits, models = tmp_path / "splits", tmp_path / "models"
    splits.mkdir()
    models.mkdir()
    assert make_shapes(splits, per_class=3, seed=0) == 3 * len(CLASSES)
    sweep = Sweep(data="shapes", k=1, seeds=1, methods=["ddsvm"], epochs=2)
    train, test = per_class_split(labels("shapes", splits), sweep.k, run_seed(0, "split", sweep, 0))
    np.savez(splits / split_name(sweep, 0), train=train, test=test)
    label = run_label("ddsvm", sweep, 0)
    assert label == "ddsvm_shapes_k1_s0" and split_name(sweep, 0) == "split_shapes_k1_s0.npz"

    train_run(splits / split_name(sweep, 0), models, label, MethodParams(loss="ddsvm"), TRAINING, sweep,
              run_seed(0, "train", sweep, 0), "cpu")
    record = json.loads((models / f"{label}.json").read_text())
    assert record["config"]["epochs"] == 2 and len(record["log"]) == 2  # the sweep's epochs, not training's 50
    assert load_model(models / f"{label}.safetensors").network.architecture.input_shape == (1, 32, 32)

    x, y = images("shapes", splits, TRAINING.upsample)
    assert x.shape == (30, 1, 32, 32)
    found = evaluate_run(splits / split_name(sweep, 0), models, label, x, y)
    assert found["n_train"] == 10 and found["n_test"] == 20 and 0 <= found["svm_error"] <= 100
    assert plots.depth_examples(x.numpy(), y.numpy(), CLASSES, tmp_path / "examples.png").stat().st_size > 0


def test_the_digits_keep_their_names_and_seeds():
    digits = Sweep(k=10, seeds=1, methods=["ce"])
    assert split_name(digits, 3) == "split_k10_s3.npz" and run_label("ce", digits, 3) == "ce_k10_s3"
    assert run_seed(0, "split", digits, 3) == derive_seed(0, "split", 10, 3)
    assert run_seed(0, "train", digits, 3) == derive_seed(0, "train", 10, 3)
    shapes = Sweep(data="shapes", k=10, seeds=1, methods=["ce"])
    assert run_seed(0, "train", shapes, 3) != run_seed(0, "train", digits, 3)
