"""The riemannian_dueling smoke profile end to end: dvc repro of its three stages, outputs, claims, MLflow runs."""
from __future__ import annotations

import json

import numpy as np
import pytest
from mlflow.tracking import MlflowClient

from tests.conftest import CLAIM_FIELDS, stage_metrics

pytestmark = pytest.mark.integration


def test_smoke_pipeline(smoke_repo):
    data = smoke_repo / "data" / "riemannian_dueling"
    for name in ("problems/rayleigh_n20_s0.npz", "problems/spd_n3.npz", "problems/simplex.npz",
                 "runs/rayleigh_n20_s2.npz", "runs/karcher_n3_s0.npz", "runs/simplex_s1.npz", "summary.csv",
                 "plots/e1_rayleigh_gap.png", "plots/e1_comparisons_to_target.png", "plots/e2_karcher_gap.png",
                 "plots/e3_rdfw_rate.png"):
        assert (data / name).exists(), name
    with np.load(data / "problems" / "spd_n3.npz") as spd:
        assert float(spd["residual"]) < 1e-12

    claims = json.loads((data / "claims.json").read_text())
    assert claims["paper"] == "riemannian_dueling" and claims["profile"] == "smoke"
    assert [c["id"] for c in claims["claims"]] == ["C1", "C2", "C3", "C4", "R5", "R6", "R7"]
    assert all(set(c) == CLAIM_FIELDS and c["passed"] is None for c in claims["claims"])
    c1, c2, c3, c4, r5, r6, r7 = claims["claims"]
    # the smoke sizes (n = 20, SPD(3), horizons 5 and 10) stand in for the spec's; each claim names what it read
    assert c1["details"]["setting"].startswith("E1 sphere S^19") and c1["ours"] < c1["details"]["reversed_control"]
    assert set(c1["details"]["by_method"]) == {"rdngd", "reversed", "euclidean_ngd", "rzo", "rgd"}
    assert c2["ours"] is None and np.isfinite(c2["details"]["B"]["20"])
    assert c3["ours"] < 0.05 and c3["details"]["min_eigenvalue_over_iterates"] > 0
    assert c4["details"]["projections"] == 0 and c4["details"]["max_sum_error"] < 1e-12
    assert r5["details"]["rzo"] is not None
    assert r6["details"]["projections"] == 0 and set(r6["details"]["median_subopt"]) == {"5", "10"}
    assert len(r7["details"]["median_dist2_per_phase"]) == 2 and r7["details"]["comparisons_per_phase"] == 1208
    metrics = stage_metrics(smoke_repo, "riemannian_dueling")
    assert metrics["rayleigh.n20.rdngd.median_gap_at_40n"] == c1["ours"]

    client = MlflowClient(tracking_uri=f"sqlite:///{smoke_repo / 'mlflow' / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("riemannian_dueling")
    stages = {r.data.tags["stage"]: r for r in client.search_runs([experiment.experiment_id], "tags.kind = 'stage'")}
    assert set(stages) == {"generate", "solve", "evaluate"} and all(r.info.status == "FINISHED" for r in stages.values())
    assert stages["generate"].data.metrics["karcher.n3.residual"] < 1e-12
