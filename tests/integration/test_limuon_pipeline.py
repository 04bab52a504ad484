"""The limuon smoke profile end to end: DVC stages, Prefect flows, MLflow runs, claims and plots."""
from __future__ import annotations

import json

import pytest
from mlflow.tracking import MlflowClient

from tests.conftest import CLAIM_FIELDS

pytestmark = pytest.mark.integration


def test_smoke_pipeline(smoke_repo):

    data = smoke_repo / "data" / "limuon"
    for name in ("mat_ls/mat_ls_0.1_0.npz", "corpus/stdlib_charlm.npz", "corpus/stdlib_charlm.manifest.json",
                 "calibration.json", "metrics.json", "plots/loss_curves.png", "plots/estimator_error.png",
                 "plots/state_sizes.png", "plots/compression_error.png"):
        assert (data / name).exists(), name
    for run in ("mat_ls/limuon2_r4/sigma0.1_seed0", "charlm/limuon2_r8/seed0", "charlm/muon/seed0"):
        for name in ("record.json", "metrics.json", "curve.csv", "evals.csv", "state.json"):
            assert (data / "runs" / run / name).exists(), f"{run}/{name}"

    claims = json.loads((data / "claims.json").read_text())
    assert (claims["paper"], claims["profile"]) == ("limuon", "smoke")
    assert [c["id"] for c in claims["claims"]] == ["C1", "C2", "C3"]
    assert all(set(c) == CLAIM_FIELDS and c["passed"] is None for c in claims["claims"])
    memory = claims["claims"][0]
    assert memory["details"]["mismatches"] == [] and 0 < memory["ours"] < 0.5

    calibration = json.loads((data / "calibration.json").read_text())  # one point: a pass-through, no AdamW in smoke
    assert calibration["muon"]["best_lr"] == 0.02 and calibration["muon"]["extensions"] == 0 and "adamw" not in calibration

    limuon = json.loads((data / "runs/charlm/limuon1/seed0/metrics.json").read_text())
    muon = json.loads((data / "runs/charlm/muon/seed0/metrics.json").read_text())
    assert muon["grad_evals"] == 40 and limuon["grad_evals"] == 79  # two gradients per step after the first

    client = MlflowClient(tracking_uri=f"sqlite:///{smoke_repo / 'mlflow' / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("limuon")
    stages = {r.data.tags["stage"]: r for r in client.search_runs([experiment.experiment_id], "tags.kind = 'stage'")}
    assert set(stages) == {"generate", "calibrate", "train", "evaluate"}
    assert all(r.info.status == "FINISHED" for r in stages.values())
    assert "charlm.muon.train_loss" in client.get_run(stages["train"].info.run_id).data.metrics
    assert client.get_run(stages["calibrate"].info.run_id).data.metrics["muon.best_lr"] == 0.02
