"""The balora smoke profile end to end: dvc repro of its four stages, outputs, claims, MLflow stage runs."""
from __future__ import annotations

import json

import pytest

from tests.conftest import CLAIM_FIELDS, stage_metrics

pytestmark = pytest.mark.integration


def test_smoke_pipeline(smoke_repo):
    data = smoke_repo / "data" / "balora"
    for name in ("generate/synthetic.npz", "generate/pretrain.bin", "generate/finetune_train.bin",
                 "generate/finetune_val.bin", "generate/manifest.json", "train/base/model.safetensors",
                 "train/base/tiny_lm.json", "solve/synthetic_runs.json", "solve/hessian.json",
                 "solve/finetune_runs.json", "summary.json", "plots/synthetic_sign_descent.png",
                 "plots/condition_numbers.png", "plots/finetune_eval_loss.png", "plots/finetune_grid.png"):
        assert (data / name).exists(), name
    claims = json.loads((data / "claims.json").read_text())
    assert claims["paper"] == "balora" and claims["profile"] == "smoke"
    assert [c["id"] for c in claims["claims"]] == ["C1", "C2", "C3", "C4"]
    assert all(set(c) == CLAIM_FIELDS and c["passed"] is None for c in claims["claims"])
    c2 = claims["claims"][1]
    assert c2["details"]["balora_gap_over_A_sq_max"] < 1e-10  # balanced after the last projection, even at smoke
    runs = json.loads((data / "solve" / "finetune_runs.json").read_text())
    assert {r["method"] for r in runs} == {"lora", "balora"}
    first = {r["method"]: r["evals"][0] for r in runs}
    assert first["lora"] == first["balora"]  # same base, adapters start at zero
    assert stage_metrics(smoke_repo, "balora")["C.balora.final_mean"] > 0
