"""The ddsvm smoke profile end to end: dvc repro of its three stages, outputs, claims, models, MLflow stage runs."""
from __future__ import annotations

import json

import numpy as np
import pytest
from mlflow.tracking import MlflowClient

from flows.ddsvm.model_io import load_model
from tests.conftest import CLAIM_FIELDS, stage_metrics

pytestmark = pytest.mark.integration


def test_smoke_pipeline(smoke_repo):
    data = smoke_repo / "data" / "ddsvm"
    for name in ("splits/split_k10_s0.npz", "models/ce_k10_s0.safetensors", "models/ddsvm_k10_s0.json", "results.csv",
                 "plots/errors_by_method.png", "plots/errors_by_k.png", "plots/margins.png"):
        assert (data / name).exists(), name
    with np.load(data / "splits" / "split_k10_s0.npz") as split:
        assert len(split["train"]) == 100 and len(split["train"]) + len(split["test"]) == 1797

    claims = json.loads((data / "claims.json").read_text())
    assert claims["paper"] == "ddsvm" and claims["profile"] == "smoke"
    assert [c["id"] for c in claims["claims"]] == ["C1", "C2", "C3", "C4", "C5", "C6"]
    assert all(set(c) == CLAIM_FIELDS and c["passed"] is None for c in claims["claims"])
    c1 = claims["claims"][0]
    assert c1["threshold"] == 0.944 and 0 < c1["ours"] and c1["details"]["svm_vs_ce_head"]["seeds"] == 1
    assert claims["claims"][2]["ours"] is None and claims["claims"][2]["threshold"] == 0.5  # no cosine-CE run at smoke

    saved = load_model(data / "models" / "ddsvm_k10_s0.safetensors")
    assert saved.info["config"]["loss"] == "ddsvm" and saved.svm.weights.shape == (10, 64)
    log = json.loads((data / "models" / "ddsvm_k10_s0.json").read_text())["log"]
    assert len(log) == 20 and all("margin_min" in row for row in log)  # refit every epoch

    metrics = stage_metrics(smoke_repo, "ddsvm")
    for key in ("k10.ce.head_error", "k10.ce.svm_error", "k10.ddsvm.svm_error"):
        assert 0 <= metrics[key] <= 100
    client = MlflowClient(tracking_uri=f"sqlite:///{smoke_repo / 'mlflow' / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("ddsvm")
    stages = {r.data.tags["stage"]: r for r in client.search_runs([experiment.experiment_id], "tags.kind = 'stage'")}
    assert set(stages) == {"generate", "train", "evaluate"} and all(r.info.status == "FINISHED" for r in stages.values())
