"""The prox_last_iterate smoke profile end to end: dvc repro of its three stages, outputs, claims, MLflow runs."""
from __future__ import annotations

import json

import pytest
from mlflow.tracking import MlflowClient

from tests.conftest import CLAIM_FIELDS

pytestmark = pytest.mark.integration


def test_smoke_pipeline(smoke_repo):
    data = smoke_repo / "data" / "prox_last_iterate"
    for name in ("problems/netlasso.npz", "problems/lasso_diabetes.npz", "runs/netlasso_T2000.npz",
                 "runs/lasso_diabetes_T4000.npz", "gaps.csv", "slopes.csv", "plots/netlasso_gap_vs_T.png",
                 "plots/lasso_diabetes_along_run.png"):
        assert (data / name).exists(), name
    references = json.loads((data / "problems" / "references.json").read_text())
    assert references["netlasso"]["solver"] in ("CLARABEL", "SCS") and references["netlasso"]["status"] == "optimal"
    assert abs(references["lasso_diabetes"]["cvxpy_check"]["F_sklearn_minus_F_cvxpy"]) < 1e-8
    claims = json.loads((data / "claims.json").read_text())
    assert claims["paper"] == "prox_last_iterate" and claims["profile"] == "smoke"
    assert [c["id"] for c in claims["claims"]] == ["C1", "C2", "C3"]
    assert all(set(c) == CLAIM_FIELDS and c["passed"] is None for c in claims["claims"])
    c3 = claims["claims"][2]  # one seed: a slope, no interval, and the gate from the bound over the smoke grid
    assert claims["claims"][0]["ours"] > 0 and c3["ours"] < 0 and c3["interval"] is None
    assert c3["threshold"] == c3["details"]["cells"][c3["details"]["deciding_cell"]]["gate"]

    client = MlflowClient(tracking_uri=f"sqlite:///{smoke_repo / 'mlflow' / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("prox_last_iterate")
    stages = {r.data.tags["stage"]: r for r in client.search_runs([experiment.experiment_id], "tags.kind = 'stage'")}
    assert set(stages) == {"generate", "solve", "evaluate"} and all(r.info.status == "FINISHED" for r in stages.values())
    assert stages["solve"].data.metrics["min_gap"] >= -1e-8  # no iterate below the reference optimum
