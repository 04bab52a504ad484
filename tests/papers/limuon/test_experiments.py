"""The LiMuon paper's run and claim helpers on tiny settings: variant names, mat-ls estimator error,
determinism, state accounting and the memory claim's exact check."""
from __future__ import annotations

import pytest

from flows.limuon.claims import matls_claim, memory_claim
from flows.limuon.experiments import MatLsSetting, MuonFamily, mat_ls_run
from flows.limuon.variants import parse_variant
from tasks.train.synthetic import matrix_least_squares

HP = MuonFamily(lr=0.02, momentum=0.9, nesterov=False, weight_decay=0.0, beta=0.1, oversampling=2,
                orthogonalizer="svd", clip=1.0)


def test_variant_names():
    assert parse_variant("limuon2_r8-ns5").rank == 8 and parse_variant("limuon2_r8-ns5").orthogonalizer == "ns5"
    assert parse_variant("muon2x").steps_factor == 2 and parse_variant("muonpp").clip
    for bad in ("limuon3", "adamw-ns5", "muon_r4"):
        with pytest.raises(ValueError, match="optimizer"):
            parse_variant(bad)


@pytest.fixture(scope="module")
def records():
    data = matrix_least_squares(16, 8, 128, 0.1, "identity", seed=0)
    return {name: mat_ls_run(data, name, MatLsSetting(steps=30, batch=8), HP, seed=0) | {"sigma": 0.1}
            for name in ("muon", "limuon1", "limuon2_r4")}


def test_mat_ls_runs_log_estimator_error_and_count_gradients(records):
    for name, record in records.items():
        assert len(record["evals"]) == 30 and record["evals"][0]["estimator_error"] > 0
        assert record["grad_evals"] == (30 if name == "muon" else 59)
    # step 1: every method's estimate is the first mini-batch gradient, so the errors agree
    first = {name: r["evals"][0]["estimator_error"] for name, r in records.items()}
    assert first["muon"] == pytest.approx(first["limuon1"]) == pytest.approx(first["limuon2_r4"])
    assert records["limuon2_r4"]["state"]["per_matrix"] == [{"shape": [16, 8], "previous_weights": 128,
                                                            "estimator": (16 + 8) * 4 + 4}]
    assert records["muon"]["state"]["estimator"] == 128 and records["muon"]["state"]["previous_weights"] == 0


def test_mat_ls_run_is_deterministic(records):
    data = matrix_least_squares(16, 8, 128, 0.1, "identity", seed=0)
    again = mat_ls_run(data, "limuon2_r4", MatLsSetting(steps=30, batch=8), HP, seed=0)
    assert again["evals"] == records["limuon2_r4"]["evals"]


def test_claims_check_what_they_say(records):
    runs = list(records.values())
    memory = memory_claim(runs, deciding=True)
    assert memory.passed is True and memory.details["mismatches"] == []
    broken = [r | {"state": r["state"] | {"per_matrix": [r["state"]["per_matrix"][0] | {"estimator": 128}]}}
              for r in runs]
    assert memory_claim(broken, deciding=True).passed is False
    quality = matls_claim(runs, deciding=True)
    loss = {name: record["final_loss"] for name, record in records.items()}
    assert quality.ours == pytest.approx(max(loss["limuon1"] / loss["muon"], loss["limuon2_r4"] / loss["muon"] / 1.05))
    assert quality.verdict.word == "undecided"  # one seed: no interval (tests/papers/limuon/test_claims.py decides)
