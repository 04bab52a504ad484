"""The sw_drso smoke profile end to end: dvc repro of its three stages, outputs, claims, MLflow runs and model."""
from __future__ import annotations

import json
import math

import pytest
from mlflow.tracking import MlflowClient

from tests.conftest import CLAIM_FIELDS, papers, stage_metrics

pytestmark = pytest.mark.integration


def test_smoke_pipeline(smoke_repo):
    data = smoke_repo / "data" / "sw_drso"
    for name in ("sets/taskA.npz", "models/A_attention_erm_s0.safetensors", "models/A_attention_sw_drso_s0.json",
                 "accuracy.csv", "plots/taskA_attention_accuracy.png"):
        assert (data / name).exists(), name
    assert not (data / "sets" / "taskB.npz").exists()  # smoke runs Task A only

    claims = json.loads((data / "claims.json").read_text())
    assert claims["paper"] == "sw_drso" and claims["profile"] == "smoke"
    assert [c["id"] for c in claims["claims"]] == ["C1", "C2", "C3a", "C3b", "C4"]
    assert all(set(c) == CLAIM_FIELDS and c["passed"] is None for c in claims["claims"])
    per_corruption = claims["claims"][4]["details"]["per_corruption"]
    assert set(per_corruption) == {"erm", "sw_drso"}
    for method, row in per_corruption.items():  # spec §6 smoke gate: finite metrics, clean accuracy above chance
        assert set(row) >= {"clean", "outliers-0.2", "drop-0.5", "mCA"}
        assert all(math.isfinite(value) for value in row.values())
    assert max(row["clean"] for row in per_corruption.values()) > 0.3
    metrics = stage_metrics(smoke_repo, "sw_drso")
    assert 0 <= metrics["A.attention.sw_drso.mCA"] <= 1

    client = MlflowClient(tracking_uri=f"sqlite:///{smoke_repo / 'mlflow' / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("sw_drso")
    stages = {r.data.tags["stage"]: r for r in client.search_runs([experiment.experiment_id], "tags.kind = 'stage'")}
    assert set(stages) == {"generate", "train", "evaluate"} and all(r.info.status == "FINISHED" for r in stages.values())
    assert "A_attention_sw_drso_s0.tv" in stages["train"].data.metrics

    done = papers(smoke_repo, "sw-drso", "classify", str(data / "sets" / "taskA.npz"), "--json")
    assert done.returncode == 2 and "CLOUD" in done.stderr  # an [N, n, 3] archive is not a cloud
    import numpy as np

    with np.load(data / "sets" / "taskA.npz") as sets:
        np.save(smoke_repo / "cloud.npy", sets["X_test"][0])
    done = papers(smoke_repo, "sw-drso", "classify", str(smoke_repo / "cloud.npy"), "--json")  # the registered model
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["method"] == "sw_drso" and summary["train_n"] == 32 == summary["points"]  # the smoke profile's n
    (smoke_repo / "cloud.npy").unlink()
