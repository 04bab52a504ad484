"""The s_adam smoke profile end to end through DVC, Prefect and MLflow."""
from __future__ import annotations

import json

import numpy as np
import pytest
from mlflow.tracking import MlflowClient

from tests.conftest import CLAIM_FIELDS, stage_metrics

pytestmark = pytest.mark.integration


def test_smoke_pipeline(smoke_repo):

    data = smoke_repo / "data" / "s_adam"
    for name in ("splits/digits_split_0.npz", "manifest.json", "summary.csv", "metrics.json",
                 "plots/loss_lgi_digits-qat-4bit.png", "plots/loss_lgi_digits-noisy-smallbatch.png", "plots/rosenbrock.png",
                 "runs/digits-qat-4bit/sadam/0/lgi_trace.csv", "runs/digits-noisy-smallbatch/adamw/0/epochs.csv",
                 "runs/ns-rosenbrock/sadam/0/trajectory.npy", "controls/damping.json",
                 "controls/digits-qat-4bit/adamw_damped/0/epochs.csv",
                 "controls/digits-noisy-smallbatch/adamw_damped/0/metrics.json"):
        assert (data / name).exists(), name
    manifest = json.loads((data / "manifest.json").read_text())
    assert manifest["sklearn_version"] and sum(manifest["splits"]["0"]["test_class_counts"]) == 540
    claims = json.loads((data / "claims.json").read_text())
    assert (claims["paper"], claims["profile"]) == ("s_adam", "smoke")
    assert [c["id"] for c in claims["claims"]] == ["C1", "C2", "C3"]
    assert all(set(c) == CLAIM_FIELDS and c["passed"] is None and isinstance(c["ours"], float) for c in claims["claims"])
    for claim in claims["claims"][:2]:  # C1 and C2 show AdamW at lr x S-Adam's measured mean damping
        control = claim["details"]["controls"]["adamw_damped"]
        assert control["damping"] == claim["details"]["sadam_mean_damp"] and 0 < control["damping"] < 1
        assert control["lr"] == control["adamw_lr"] * control["damping"] and 0 <= control["median_accuracy"] <= 1
    metrics = stage_metrics(smoke_repo, "s_adam")
    assert metrics["digits-noisy-smallbatch.adamw_damped.lr"] == claims["claims"][1]["details"]["controls"]["adamw_damped"]["lr"]
    assert "digits-noisy-smallbatch.adamw_damped.volatility" in metrics
    assert metrics["sanity.sadam_lambda0_vs_adamw.max_abs_accuracy_diff"] == 0.0
    assert 0 < metrics["digits-qat-4bit.sadam.mean_damp"] < 1
    assert np.load(data / "runs/ns-rosenbrock/sadam/0/trajectory.npy").shape == (201, 2)

    client = MlflowClient(tracking_uri=f"sqlite:///{smoke_repo / 'mlflow' / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("s_adam")
    stages = {r.data.tags["stage"]: r for r in client.search_runs([experiment.experiment_id], "tags.kind = 'stage'")}
    assert set(stages) == {"generate", "train", "control", "evaluate"}
    assert all(r.info.status == "FINISHED" for r in stages.values())
    assert stages["train"].data.params["optimizers.sadam.k"] == "8"
