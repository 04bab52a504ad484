"""The neural_qaoa2 smoke profile end to end, then `papers neural-qaoa2 solve` on a user's files."""
from __future__ import annotations

import json

import numpy as np
import pytest
from mlflow.tracking import MlflowClient

from tasks.quantum.instances import brute_force_maxcut, read_edge_list
from tests.conftest import CLAIM_FIELDS, papers, stage_metrics

pytestmark = pytest.mark.integration


def test_smoke_pipeline_and_solving_a_users_graph(smoke_repo, tmp_path):

    data = smoke_repo / "data" / "neural_qaoa2"
    for name in ("graphs/train", "graphs/test_id", "graphs/test_ood", "reference.json", "critic_data.json", "networks.pt",
                 "train_curves.csv", "runs.csv", "per_graph.csv", "metrics.json", "plots/rho_per_policy.png",
                 "plots/critic_calibration.png"):
        assert (data / name).exists(), name
    claims = json.loads((data / "claims.json").read_text())
    assert [c["id"] for c in claims["claims"]] == ["C1", "C2", "C3"]
    assert all(set(c) == CLAIM_FIELDS and c["passed"] is None for c in claims["claims"])
    metrics = json.loads((data / "metrics.json").read_text())
    assert all(0 <= metrics[f"test_id.{p}.mean_rho"] <= 1 for p in ("random", "kl", "neural"))
    assert {"C1", "C2", "C3", "critic.mean_spearman", "intra_share.mean_spearman", "references.proved"} <= set(metrics)
    logged = stage_metrics(smoke_repo, "neural_qaoa2")  # the rest of the evaluate stage's numbers: in MLflow
    assert {"critic.within_pearson", "references.lower_bound"} <= set(logged)
    reference = json.loads((data / "reference.json").read_text())
    assert all(r["status"] == "proved" and r["optimum"] >= r["local_search"] for r in reference.values())  # n <= 19: SCIP proves

    client = MlflowClient(tracking_uri=f"sqlite:///{smoke_repo / 'mlflow' / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("neural_qaoa2")
    stages = {r.data.tags["stage"]: r for r in client.search_runs([experiment.experiment_id], "tags.kind = 'stage'")}
    assert set(stages) == {"generate", "solve", "train", "evaluate"} and all(r.info.status == "FINISHED" for r in stages.values())
    assert client.search_model_versions("name = 'neural_qaoa2-networks'")

    # A user's weighted edge list: a 12-node ring with a chord, optimum by brute force.
    edges = [(i, (i + 1) % 12, 1 + i % 3) for i in range(12)] + [(0, 6, -2)]
    graph_file = tmp_path / "ring.txt"
    graph_file.write_text("# u v w\n" + "".join(f"{u} {v} {w}\n" for u, v, w in edges))
    optimum, _ = brute_force_maxcut(read_edge_list(graph_file))
    for policy in ("neural", "kl"):
        out = tmp_path / f"{policy}.txt"
        done = papers(smoke_repo, "neural-qaoa2", "solve", str(graph_file), "--policy", policy, "--n-max", "5", "--out", str(out), "--json")
        assert done.returncode == 0, done.stderr
        summary = json.loads(done.stdout)
        assert set(summary) >= {"cut", "assignment_file", "time_s", "policy"} and summary["policy"] == policy
        sides = np.array([int(line.split()[1]) for line in out.read_text().splitlines()])
        assert len(sides) == 12 and summary["cut"] == read_edge_list(graph_file).cut(sides) <= optimum

    qubo = tmp_path / "q.txt"
    qubo.write_text("1 -2 0\n-2 3 1\n0 1 -1\n")
    done = papers(smoke_repo, "neural-qaoa2", "solve", str(qubo), "--qubo", "--policy", "random", "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["qubo_objective"] == json.loads(done.stdout)["cut"]

    bad = tmp_path / "bad.txt"
    bad.write_text("0 1 1\n1 x 2\n")
    failed = papers(smoke_repo, "neural-qaoa2", "solve", str(bad), "--policy", "random")
    assert failed.returncode == 2 and "bad.txt" in failed.stderr and ":2" in failed.stderr
