"""The sps_safe smoke profile end to end: dvc repro of its four stages, outputs, claims, MLflow stage runs."""
from __future__ import annotations

import json

import numpy as np
import pytest
from mlflow.tracking import MlflowClient

from tests.conftest import CLAIM_FIELDS, stage_metrics

pytestmark = pytest.mark.integration


def test_smoke_pipeline(smoke_repo):

    data = smoke_repo / "data" / "sps_safe"
    for name in ("problems/svm_interp_0.npz", "problems/svm_noisy_0.npz", "problems/digits.npz", "runs/svm_interp_0.npz",
                 "runs/svm_noisy_0.npz", "digits/sps_safe_M1_0.npz", "digits/adam_lr0.001_0.npz", "summary.csv",
                 "plots/svm_interp_rel_subopt.png", "plots/svm_noisy_step_sizes.png", "plots/svm_noisy_grad_norms.png",
                 "plots/digits_accuracy.png", "plots/digits_traces.png"):
        assert (data / name).exists(), name
    with np.load(data / "problems" / "svm_interp_0.npz") as problem:
        assert abs(float(problem["f_star"])) < 1e-9 and int(problem["lp_status"]) == 0

    claims = json.loads((data / "claims.json").read_text())
    assert claims["paper"] == "sps_safe" and claims["profile"] == "smoke"
    assert [c["id"] for c in claims["claims"]] == ["C1", "C2", "C3"]
    assert all(set(c) == CLAIM_FIELDS and c["passed"] is None and isinstance(c["ours"], float) for c in claims["claims"])
    c1 = claims["claims"][0]["details"]  # decided by the mean, with the median and the last-k average beside it
    assert c1["verdict_statistic"] == "mean" and set(c1["by_statistic"]) == {"mean", "median", "last_k_mean"}
    assert c1["by_statistic"]["mean"]["sps_safe"] == c1["sps_safe"] and c1["last_k_epochs"] == 1
    assert claims["claims"][0]["ours"] == pytest.approx(c1["sps_safe"] / c1["bound"])  # one seed: the ratio itself
    assert len(c1["f_x0_by_seed"]) == 1 and c1["f_x0_by_seed"][0] > 0
    assert c1["grids"]["sgd"]["grid"] == [0.01] and c1["grids"]["sgd"]["at_edge"] == "single point"
    # the widening rule on C1's tuned grids: one-point smoke grids pass through, nothing is added
    calibration = json.loads((data / "runs" / "calibration.json").read_text())
    assert c1["calibration"] == calibration["svm_interp"] and set(calibration) == {"svm_interp"}
    for rule, initial in (("sgd", 0.01), ("sps_max", 1.0)):
        record = calibration["svm_interp"]["rules"][rule]
        assert record["initial_grid"] == [initial] and record["best_lr"] == initial and record["extensions"] == 0
        assert record["grid"] == {str(initial): c1["grids"][rule]["value"]} and record["added_runs"] == []
    assert not (data / "runs" / "widened").exists()
    metrics = stage_metrics(smoke_repo, "sps_safe")
    assert np.isfinite(metrics["svm_interp.sps_safe_M1.final_rel_subopt"])
    assert metrics["svm_interp.sps_safe_M1.final_rel_subopt_median"] == metrics["svm_interp.sps_safe_M1.final_rel_subopt"]
    assert np.isfinite(metrics["svm_interp.sps_safe_M1.last_k_rel_subopt"])
    assert 0 <= metrics["svm_noisy.sps_safe_M1000.safeguard_fraction"] <= 1
    assert 0 <= metrics["digits.adam_lr0.001.test_accuracy"] <= 1

    client = MlflowClient(tracking_uri=f"sqlite:///{smoke_repo / 'mlflow' / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("sps_safe")
    stages = {r.data.tags["stage"]: r for r in client.search_runs([experiment.experiment_id], "tags.kind = 'stage'")}
    assert set(stages) == {"generate", "solve", "train", "evaluate"} and all(r.info.status == "FINISHED" for r in stages.values())
    assert "svm_interp.sps_safe_M1.rel_subopt" in stages["evaluate"].data.metrics
    solve = stages["solve"].data.metrics
    assert solve["widened_runs"] == 0 and solve["calibration.svm_interp.sgd.best_lr"] == 0.01
    assert solve["calibration.svm_interp.sps_max.lr_1.val_loss"] == c1["grids"]["sps_max"]["value"]
