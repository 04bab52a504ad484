"""The smoke profile through real DVC, a real Prefect server and a fresh MLflow store."""
from __future__ import annotations

import json
import subprocess
import sys
import time

import numpy as np
import pytest
from mlflow.tracking import MlflowClient

from tests.conftest import CLAIM_FIELDS, dvc, stage_env

pytestmark = pytest.mark.integration


def runs_of(repo, paper="se3_sync"):
    client = MlflowClient(tracking_uri=f"sqlite:///{repo / 'mlflow' / 'mlflow.db'}")
    experiment = client.get_experiment_by_name(paper)
    return client.search_runs([experiment.experiment_id], max_results=1000)


def estimates(runs) -> dict[str, bytes]:
    """The pose estimates of every run file (wall times left out: they differ run to run)."""
    found = {}
    for path in sorted(runs.glob("*.npz")):
        with np.load(path) as result:
            found[path.name] = result["R"].tobytes() + result["t"].tobytes()
    return found


def test_smoke_repro_outputs_tracking_noop_and_bad_params(smoke_repo):

    data = smoke_repo / "data" / "se3_sync"
    for name in ("instances", "timing_instances", "runs", "timing.json", "errors.csv", "metrics.json",
                 "error_vs_noise.csv", "plots/error_vs_noise_geometric.png", "plots/time_vs_n.png"):
        assert (data / name).exists(), name
    claims = json.loads((data / "claims.json").read_text())
    assert (claims["paper"], claims["profile"]) == ("se3_sync", "smoke")
    assert [c["id"] for c in claims["claims"]] == ["C1", "C2", "C3"]
    for claim in claims["claims"]:
        assert set(claim) == CLAIM_FIELDS
        assert claim["passed"] is None, "smoke is too small to decide a claim"
        assert isinstance(claim["ours"], float)
    assert "| se3_sync | smoke | C1 |" in (smoke_repo / "reports" / "claims.md").read_text()

    runs = runs_of(smoke_repo)
    stages = {r.data.tags["stage"]: r for r in runs if r.data.tags.get("kind") == "stage"}
    parents = [r for r in runs if r.data.tags.get("kind") == "pipeline"]
    assert set(stages) == {"generate", "solve", "evaluate"}
    assert len(parents) == 1 and parents[0].info.status == "FINISHED"
    for run in stages.values():
        tags = run.data.tags
        assert run.info.status == "FINISHED"
        assert tags["profile"] == "smoke" and tags["device"] == "cpu" and tags["git_dirty"] in ("true", "false")
        assert len(tags["git_commit"]) == 40 and tags["mlflow.parentRunId"] == parents[0].info.run_id
        assert any(k.startswith("dvc.dep.tasks/sync") for k in tags) and "inputs_hash" in tags
        assert run.data.params["n"] == "20"
    assert "C1.ours" in stages["evaluate"].data.metrics

    started = time.monotonic()
    again = dvc(smoke_repo, "repro")
    assert "up to date" in again.stdout.lower() or "didn't change" in again.stdout.lower(), again.stdout
    assert time.monotonic() - started < 30
    assert len(runs_of(smoke_repo)) == len(runs)

    # The task runner is a setting: Dask (prefect-dask, local cluster) gives the same estimates.
    threaded = estimates(data / "runs")
    env = stage_env(smoke_repo) | {"PAPERS_TASK_RUNNER": "dask"}
    done = subprocess.run([sys.executable, "-m", "stages", "se3_sync", "solve"], cwd=smoke_repo, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert estimates(data / "runs") == threaded

    params = smoke_repo / "stages" / "se3_sync" / "params.yaml"
    good = params.read_text()
    params.write_text(good.replace("noise_levels: [0.05]", "noise_levels: [0.05, 0.1, -0.1]", 1))
    try:
        failed = dvc(smoke_repo, "repro", "stages/se3_sync/dvc.yaml", check=False)
    finally:
        params.write_text(good)  # the copy is shared by the other pipeline tests
    assert failed.returncode != 0
    assert "se3_sync.smoke.noise_levels[2]: must be >= 0, got -0.1" in failed.stderr + failed.stdout
    assert not (data / "instances").exists(), "a failed stage must leave no output for DVC to take"
    failed_runs = [r for r in runs_of(smoke_repo) if r.info.status == "FAILED" and r.data.tags.get("stage") == "generate"]
    assert failed_runs and "noise_levels[2]" in failed_runs[0].data.tags["error"]
