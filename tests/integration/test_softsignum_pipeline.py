"""The softsignum smoke profile end to end: dvc repro of its four stages, outputs, claims, MLflow runs."""
from __future__ import annotations

import json

import numpy as np
import pytest
from mlflow.tracking import MlflowClient

from tests.conftest import CLAIM_FIELDS, stage_metrics

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
    metrics = stage_metrics(smoke_repo, "softsignum")
    assert metrics["pre_transition.coincide"] == 1.0  # soft methods follow their hard twins exactly until T_sign
    assert metrics["pre_transition.gap.quad_het/hardswitch_x20"] == 0.0  # and so do the controls

    # the clamp's controls, reported beside SoftSignum in C1 and C2, undecided like the claims
    c1, c2, c3 = claims["claims"]
    for claim, key in ((c1, "ratio_to_signum"), (c2, "minus_signum")):
        assert set(claim["details"]["controls"]) == {"hardswitch_x20", "softsignum_unclamped"}
        assert all(c["meets_claim"] is None and c[key] is not None for c in claim["details"]["controls"].values())
        assert metrics[f"control.{claim['id']}.hardswitch_x20.{key}"] == claim["details"]["controls"]["hardswitch_x20"][key]
    assert c1["details"]["clamp"]["softsignum"]["schedule_at_tau_max"] == 1.0  # the smoke schedule sits at tau_max = 20
    assert c1["details"]["clamp"]["softsignum_unclamped"]["tau_max"] == 1e9 and c3["details"]["clamp"]["charlm"]
    run = json.loads((data / "runs/charlm/hardswitch_x20/0/metrics.json").read_text())
    assert run["tau_max"] is None and run["saturated_after_t_sign"] is not None

    # one-point grids pass through the widening rule
    calibration = json.loads((data / "calibration.json").read_text())
    assert all(calibration[m]["extensions"] == 0 and calibration[m]["at_edge"] is False and len(calibration[m]["grid"]) == 1
               for m in ("signum", "muon", "adamw")) and "lion" not in calibration

    client = MlflowClient(tracking_uri=f"sqlite:///{smoke_repo / 'mlflow' / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("softsignum")
    stages = {r.data.tags["stage"]: r for r in client.search_runs([experiment.experiment_id], "tags.kind = 'stage'")}
    assert set(stages) == {"generate", "calibrate", "train", "evaluate"}
    assert all(r.info.status == "FINISHED" for r in stages.values())
    assert len(client.get_metric_history(stages["train"].info.run_id, "quad_het.softsignum.seed0.tau")) == 30
    assert client.get_run(stages["calibrate"].info.run_id).data.metrics["muon.at_edge"] == 0.0
