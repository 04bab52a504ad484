"""The lambda_grpo smoke profile end to end: dvc repro of its five stages (both families), outputs, claims, MLflow
stage runs."""
from __future__ import annotations

import json

import pytest
from mlflow.tracking import MlflowClient

from tests.conftest import CLAIM_FIELDS, stage_metrics

pytestmark = pytest.mark.integration


def test_smoke_pipeline(smoke_repo):
    data = smoke_repo / "data" / "lambda_grpo"
    lr = json.loads((data / "tune" / "choice.json").read_text())["lr"]
    assert lr in (0.0001, 0.001)  # the smoke lr_grid
    label = f"G6_lr{lr:g}_sequence_seed0"
    for name in ("generate/val.jsonl", "generate/test.jsonl", "generate/tune.jsonl", "generate/sft_traces.jsonl",
                 "generate/second/val.jsonl", "train/sft.json", "train/second/sft.json",
                 "train/sft_policy_seed0/model.safetensors", "train/sft_policy_seed0/tiny_lm.json",
                 "tune/runs/grpo_lr0.001.json", "solve/summary.json", f"solve/runs/grpo_{label}.json",
                 f"solve/runs/lambda_grpo_{label}.json", f"solve/second/runs/lambda_grpo_{label}.json",
                 "summary.json", "plots/greedy_val_accuracy.png", "plots/sampled_val_accuracy.png",
                 "plots/lambda_histogram.png", "plots/second.greedy_val_accuracy.png"):
        assert (data / name).exists(), name
    val = [json.loads(line) for line in (data / "generate" / "val.jsonl").read_text().splitlines()]
    test = [json.loads(line) for line in (data / "generate" / "test.jsonl").read_text().splitlines()]
    assert len(val) == 64 and len(test) == 128 and not {json.dumps(r) for r in val} & {json.dumps(r) for r in test}

    claims = json.loads((data / "claims.json").read_text())
    assert claims["paper"] == "lambda_grpo" and claims["profile"] == "smoke"
    assert [c["id"] for c in claims["claims"]] == ["C1", "C2", "C3", "C4", "C5"]
    assert all(set(c) == CLAIM_FIELDS and c["passed"] is None for c in claims["claims"])
    c1, c2, _, c4, _ = claims["claims"]
    assert c1["ours"] <= 1e-8 and c1["details"]["control_grpo_vs_lambda_grpo"] > 1e-4  # exact even at smoke
    assert 0 <= c2["ours"] <= 1 and c2["details"]["groups"] == 2 * 15 * 8 and c4["ours"] > 0

    runs = {m: json.loads((data / "solve" / "runs" / f"{m}_{label}.json").read_text())
            for m in ("grpo", "lambda_grpo")}
    assert [e["step"] for e in runs["grpo"]["evals"]] == [0, 5, 10, 15]
    assert runs["grpo"]["evals"][0] == runs["lambda_grpo"]["evals"][0]  # one SFT policy for both methods
    metrics = stage_metrics(smoke_repo, "lambda_grpo")
    assert 0 <= metrics["lambda_grpo.peak_greedy_val"] <= 1 and 0 <= metrics["initial_greedy_val"] <= 1

    client = MlflowClient(tracking_uri=f"sqlite:///{smoke_repo / 'mlflow' / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("lambda_grpo")
    stages = {r.data.tags["stage"]: r for r in client.search_runs([experiment.experiment_id], "tags.kind = 'stage'")}
    assert set(stages) == {"generate", "train", "tune", "solve", "evaluate"} and all(r.info.status == "FINISHED" for r in stages.values())
    assert "sft_loss.seed0" in stages["train"].data.metrics and "grpo.greedy_val" in stages["evaluate"].data.metrics
