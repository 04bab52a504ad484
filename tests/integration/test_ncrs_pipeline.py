"""The ncrs smoke profile end to end: dvc repro of its three stages, outputs, claims, MLflow runs."""
from __future__ import annotations

import json

import numpy as np
import pytest
from mlflow.tracking import MlflowClient

from tests.conftest import CLAIM_FIELDS, stage_metrics

pytestmark = pytest.mark.integration


def test_smoke_pipeline(smoke_repo):
    data = smoke_repo / "data" / "ncrs"
    for name in ("problems/problem_d10_k2.npz", "problems/problem_d50_k2.npz", "problems/problem_d20_k4_norm3.npz",
                 "runs/ncrs_margin0.4_d50.npz", "runs/ngd_margin0.4_d10.npz", "runs/exact_margin0.4_d50.npz",
                 "runs/cma_es_margin0.4_d10.npz", "runs/one_plus_one_margin0.4_d50.npz", "runs/gap_sqrt_gap_voting.npz",
                 "runs/kscaling_k4.npz", "runs/alpha_choice.json", "summary.csv", "plots/n_against_d.png",
                 "plots/grad_traces.png", "plots/voting_traces.png"):
        assert (data / name).exists(), name

    claims = json.loads((data / "claims.json").read_text())
    assert claims["paper"] == "ncrs" and claims["profile"] == "smoke"
    assert [c["id"] for c in claims["claims"]] == ["C1", "C2", "C3", "R4"]
    assert all(set(c) == CLAIM_FIELDS and c["passed"] is None for c in claims["claims"])
    c1, c2, c3, r4 = claims["claims"]
    assert c1["ours"] > 0 and set(c1["details"]["by_method"]) == {"ncrs", "ngd", "exact", "cma_es", "one_plus_one"}
    assert c2["ours"] is None  # the smoke profile runs p = 0.4 only
    assert set(c3["details"]["by_oracle"]) == {"sqrt_gap", "bradley_terry"}
    assert 0 < c3["ours"] and r4["passed"] is None
    alpha = json.loads((data / "runs" / "alpha_choice.json").read_text())
    assert alpha["ncrs_margin0.4_d50"] == 0.05
    metrics = stage_metrics(smoke_repo, "ncrs")
    assert metrics["ncrs.d50.p0.4.median_N"] == c1["details"]["by_method"]["ncrs"]["N"]["50"]

    client = MlflowClient(tracking_uri=f"sqlite:///{smoke_repo / 'mlflow' / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("ncrs")
    stages = {r.data.tags["stage"]: r for r in client.search_runs([experiment.experiment_id], "tags.kind = 'stage'")}
    assert set(stages) == {"generate", "solve", "evaluate"} and all(r.info.status == "FINISHED" for r in stages.values())
    assert np.isfinite(stages["solve"].data.metrics["step.ncrs_margin0.4_d10"])
