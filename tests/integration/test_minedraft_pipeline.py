"""The minedraft smoke profile end to end: dvc repro of its four stages, outputs, claims, stage metrics."""
from __future__ import annotations

import json

import pytest

from tests.conftest import CLAIM_FIELDS, stage_metrics

pytestmark = pytest.mark.integration


def test_smoke_pipeline(smoke_repo):
    data = smoke_repo / "data" / "minedraft"
    for name in ("generate/corpus.pt", "generate/prompts.json", "train/target/model.safetensors",
                 "train/drafter/tiny_lm.json", "solve/runs.json", "solve/greedy.json",
                 "summary.json", "plots/throughput.png", "plots/latency.png", "plots/speedup_model.png"):
        assert (data / name).exists(), name
    claims = json.loads((data / "claims.json").read_text())
    assert claims["paper"] == "minedraft" and claims["profile"] == "smoke"
    assert [c["id"] for c in claims["claims"]] == ["C1", "C2", "C3"]
    assert all(set(c) == CLAIM_FIELDS and c["passed"] is None and isinstance(c["ours"], float) for c in claims["claims"])
    c1, c2, c3 = (c["details"] for c in claims["claims"])
    assert set(c1["greedy_match_fraction"]) == {"SD-1c.k2", "PSD-2c.k2"}
    assert all(t["top2_gap"] < 1e-4 for t in c1["mismatches"]) or claims["claims"][0]["ours"] < 1
    assert set(c2["throughput"]) == {"PSD-2c", "SD-1c", "SD-2c", "AR-1c"} and c2["host"]["efficiency"] > 0
    assert c2["ideal_ceiling_by_k"]["2"] >= 1 and c2["gpu_vs_sd_gpu"] == "not in this profile"
    assert c2["vsr_gap_points"] <= 2  # same per-request streams: PSD and SD accept alike
    assert [row["k"] for row in c3["by_k"]] == [2] and c3["by_k"][0]["predicted"] > 0
    solved = json.loads((data / "solve" / "runs.json").read_text())
    runs = solved["runs"]
    assert {r["config"] for r in runs} == {"AR-1c", "SD-1c", "PSD-2c", "SD-2c"}
    assert all(r["tokens"] == 4 * 8 and r["load_before"] >= 0 for r in runs)
    assert solved["topology"]["cpu_count"] >= 1 and len(solved["probes"]) == 2  # before the repeat and after it
    assert all(set(r["calibration"]) == {"before", "after"} for r in runs if r["config"] in ("SD-1c", "PSD-2c"))
    metrics = stage_metrics(smoke_repo, "minedraft")
    assert metrics["SD-1c.k2.throughput"] > 0
