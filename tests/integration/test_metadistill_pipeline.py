"""The metadistill smoke profile end to end: dvc repro of its four stages, outputs, claims, MLflow stage runs."""
from __future__ import annotations

import json
import pickle

import numpy as np
import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from tests.conftest import CLAIM_FIELDS, stage_metrics

pytestmark = pytest.mark.integration


def test_smoke_pipeline(smoke_repo):
    data = smoke_repo / "data" / "metadistill"
    for name in ("teacher_raw.pkl", "teacher_sel.pkl", "models/les_md.pt", "models/les_base.pt", "models/training.json",
                 "runs/bbob.parquet", "runs/control.parquet", "summary.csv", "plots/final_precision_d5.png",
                 "plots/ecdf_d5.png", "plots/final_precision_d6.png",
                 "plots/training.png"):
        assert (data / name).exists(), name
    with open(data / "teacher_sel.pkl", "rb") as handle:
        stitched = pickle.load(handle)
    assert stitched["interval"] == 10 and len(stitched["episodes"]) == 2 * 5
    assert all(len(e["means"]) == 20 and set(e["picks"]) <= {"cmaes", "de"} for e in stitched["episodes"])

    runs = pd.read_parquet(data / "runs" / "bbob.parquet")
    assert set(runs.variant) == {"baseline", "md_j0", "md_j1", "cmaes", "cmaes_default"} and set(runs.fid) == {1, 8, 15}
    assert set(runs.instance) == {1, 2} and runs.evaluations.max() <= 400 and (runs.best_so_far >= runs.f_opt).all()
    assert set(runs.dim) == {5, 6} and set(runs[runs.variant == "cmaes_default"].evaluations.groupby(runs.dim).max()) == {400, 396}
    control = pd.read_parquet(data / "runs" / "control.parquet")
    assert set(control.variant) == set(runs.variant) and set(control.seed) == {0, 1}
    assert control.best_so_far_return.between(-20, 0).all()

    claims = json.loads((data / "claims.json").read_text())
    assert claims["paper"] == "metadistill" and claims["profile"] == "smoke"
    assert [c["id"] for c in claims["claims"]] == ["C1", "C2", "C3", "R1"]
    assert all(set(c) == CLAIM_FIELDS and c["passed"] is None for c in claims["claims"])
    assert claims["claims"][2]["details"]["per_seed"]["md_j0"] and "d = 6" in claims["claims"][3]["statement"]
    c1 = claims["claims"][0]["details"]
    assert set(c1["per_function"]) == {"f1", "f8", "f15"} and c1["functions"] == 3
    assert sum(claims["claims"][1]["details"]["average_ranks"].values()) == pytest.approx(6.0)
    metrics = stage_metrics(smoke_repo, "metadistill")
    assert np.isfinite(metrics["d5.f1.md_j0.log10_precision"])

    client = MlflowClient(tracking_uri=f"sqlite:///{smoke_repo / 'mlflow' / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("metadistill")
    stages = {r.data.tags["stage"]: r for r in client.search_runs([experiment.experiment_id], "tags.kind = 'stage'")}
    assert set(stages) == {"generate", "train", "solve", "evaluate"} and all(r.info.status == "FINISHED" for r in stages.values())
    assert "distill.kl" in stages["train"].data.metrics and stages["train"].data.metrics["meta.wall_time_s"] > 0
