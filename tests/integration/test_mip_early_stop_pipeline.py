"""The mip_early_stop smoke profile end to end, then `papers mip-early-stop stop` on its outputs."""
from __future__ import annotations

import json

import pytest
from mlflow.tracking import MlflowClient

from tests.conftest import CLAIM_FIELDS, papers

pytestmark = pytest.mark.integration


def test_smoke_pipeline_and_stopping_a_users_file(smoke_repo):

    data = smoke_repo / "data" / "mip_early_stop"
    for name in ("instances/instances.json", "trajectories/mis/test", "baselines/bestsol1/gisp", "models/mis.pt",
                 "stoppers/gisp.pt", "calibration.json", "results.csv", "online.csv", "metrics.json",
                 "plots/mis_coverage.png", "plots/gisp_time_saving.png", "plots/mis_gaps.png"):
        assert (data / name).exists(), name
    claims = json.loads((data / "claims.json").read_text())
    assert [c["id"] for c in claims["claims"]] == [f"C{i}-{f}" for f in ("mis", "gisp") for i in (1, 2, 3)]
    assert all(set(c) == CLAIM_FIELDS and c["passed"] is None for c in claims["claims"])
    online = (data / "online.csv").read_text().splitlines()
    assert len(online) == 1 + 2 and all(line.split(",")[4] == "True" for line in online[1:]), "replay and online agree"

    client = MlflowClient(tracking_uri=f"sqlite:///{smoke_repo / 'mlflow' / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("mip_early_stop")
    stages = {r.data.tags["stage"]: r for r in client.search_runs([experiment.experiment_id], "tags.kind = 'stage'")}
    assert set(stages) == {"generate", "solve", "train", "calibrate", "evaluate"}
    assert all(r.info.status == "FINISHED" for r in stages.values())
    assert len(client.get_metric_history(stages["train"].info.run_id, "train_loss.mis")) >= 2
    assert client.search_model_versions("name = 'mip_early_stop-mis'")

    mis = data / "instances" / "mis" / "test" / "mis_test_0000.mps"
    done = papers(smoke_repo, "mip-early-stop", "stop", str(mis), "--stopper", "mip_early_stop-mis", "--alpha", "0.3", "--json",
                  "--sol", str(smoke_repo / "out.sol"))
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert set(summary) >= {"objective", "dual_bound", "stopped_early", "solve_time_s", "status", "time_saved_s"}
    assert summary["status"] in ("userinterrupt", "optimal", "gaplimit")
    assert summary["objective"] <= summary["dual_bound"] + 1e-6, "a maximization incumbent never beats its dual bound"
    assert "objective value:" in (smoke_repo / "out.sol").read_text()

    gisp = data / "instances" / "gisp" / "test" / "gisp_test_0000.mps"
    refused = papers(smoke_repo, "mip-early-stop", "stop", str(gisp), "--stopper", str(data / "stoppers" / "mis.pt"))
    assert refused.returncode == 2 and "trained for family 'mis'" in refused.stderr and "--force" in refused.stderr
    forced = papers(smoke_repo, "mip-early-stop", "stop", str(gisp), "--stopper", str(data / "stoppers" / "mis.pt"), "--force",
                    "--no-compare", "--json")
    assert forced.returncode == 0 and json.loads(forced.stdout)["family"] == "mis"

    bad = smoke_repo / "bad.mps"
    bad.write_text("this is not a MIP\n")
    unreadable = papers(smoke_repo, "mip-early-stop", "stop", str(bad), "--stopper", str(data / "stoppers" / "mis.pt"))
    assert unreadable.returncode == 2 and "bad.mps" in unreadable.stderr and "SCIP" in unreadable.stderr
