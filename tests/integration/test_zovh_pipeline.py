"""The zovh smoke profile end to end: dvc repro of its three stages, outputs, claims, MLflow stage runs."""
from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from mlflow.tracking import MlflowClient

from tests.conftest import CLAIM_FIELDS, stage_metrics

pytestmark = pytest.mark.integration


def test_smoke_pipeline(smoke_repo):
    data = smoke_repo / "data" / "zovh"
    for name in ("problems/seed_0.npz", "problems/descent_x0.npy", "runs/hessian_errors.csv",
                 "runs/descent/quadratic_zovh_reuse_0.npz", "runs/timing.json", "hessian_errors.csv", "descent.csv",
                 "plots/error_vs_queries.png", "plots/error_by_regime.png", "plots/descent.png"):
        assert (data / name).exists(), name
    claims = json.loads((data / "claims.json").read_text())
    assert claims["paper"] == "zovh" and claims["profile"] == "smoke"
    assert [c["id"] for c in claims["claims"]] == ["C1", "C2", "C3", "C4", "C5"]
    assert all(set(c) == CLAIM_FIELDS and c["passed"] is None for c in claims["claims"])
    assert all(isinstance(claims["claims"][k]["ours"], float) for k in (0, 1, 4))
    assert claims["claims"][2]["ours"] is None  # smoke runs the quadratic only: C3 needs Levy too
    with open(data / "hessian_errors.csv") as handle:
        rows = list(csv.DictReader(handle))
    assert {r["estimator"] for r in rows} == {"s1", "s2", "scd", "cd", "zovh", "zovh_reuse"}
    assert {(r["regime"], r["K"]) for r in rows} == {("near", "3"), ("near", "9"), ("paper", "3")}
    assert all(np.isfinite(float(r["mean_frob_err"])) for r in rows)
    metrics = stage_metrics(smoke_repo, "zovh")
    assert metrics["quadratic.near.zovh.K3.frob_err"] > 0

    client = MlflowClient(tracking_uri=f"sqlite:///{smoke_repo / 'mlflow' / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("zovh")
    stages = {r.data.tags["stage"]: r for r in client.search_runs([experiment.experiment_id], "tags.kind = 'stage'")}
    assert set(stages) == {"generate", "solve", "evaluate"} and all(r.info.status == "FINISHED" for r in stages.values())
