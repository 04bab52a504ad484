"""The softsignum smoke profile end to end: dvc repro of its four stages, outputs, claims, MLflow runs."""
from __future__ import annotations

import json

import numpy as np
import pytest
from mlflow.tracking import MlflowClient

from tests.integration.test_pipeline import CLAIM_FIELDS

pytestmark = pytest.mark.integration


def test_smoke_pipeline(smoke_repo):

    data = smoke_repo / "data" / "softsignum"
    for name in ("instances/quad_het_0.npz", "instances/mat_het_0.npz", "stdlib_charlm.npz", "stdlib_charlm.manifest.json",
                 "calibration.json", "runs/quad_het/softsignum/0/schedule.npy", "runs/charlm/softmuon/0/curve.csv",
                 "runs/mat_het/muon/0/metrics.json", "metrics.json", "plots/quad_het_curves.png",
                 "plots/charlm_temperature.png"):
        assert (data / name).exists(), name
    manifest = json.loads((data / "stdlib_charlm.manifest.json").read_text())
    assert manifest["n_chars"] == 60000 and len(manifest["sha256"]) == 64 and manifest["vocab_size"] == 98
    schedule = np.load(data / "runs/quad_het/softsignum/0/schedule.npy")
    assert len(schedule) == 30 and schedule[0] == 20.0 and np.all(np.diff(schedule) <= 0)  # T=300, alpha 0.9
    claims = json.loads((data / "claims.json").read_text())
    assert [c["id"] for c in claims["claims"]] == ["C1", "C2", "C3"]
    assert all(set(c) == CLAIM_FIELDS and c["passed"] is None and c["ours"] is not None for c in claims["claims"])
    metrics = json.loads((data / "metrics.json").read_text())
    assert metrics["pre_transition.coincide"] == 1.0  # soft methods follow their hard twins exactly until T_sign

    client = MlflowClient(tracking_uri=f"sqlite:///{smoke_repo / 'mlflow' / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("softsignum")
    stages = {r.data.tags["stage"]: r for r in client.search_runs([experiment.experiment_id], "tags.kind = 'stage'")}
    assert set(stages) == {"generate", "calibrate", "train", "evaluate"}
    assert all(r.info.status == "FINISHED" for r in stages.values())
    assert len(client.get_metric_history(stages["train"].info.run_id, "quad_het.softsignum.seed0.tau")) == 30
