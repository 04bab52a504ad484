"""LiMuon's claims decided on intervals: C2 and C3 on a paired bootstrap over seeds (pass, fail, inconclusive,
undecided in smoke), C1 exact."""
from __future__ import annotations

import pytest

from flows.limuon.claims import MATLS_TOLERANCE, charlm_claim, matls_claim, memory_claim

SEEDS = range(6)


def matls_runs(limuon1: list[float], low_rank: list[float], sigmas=(0.1, 0.5)) -> list[dict]:
    """Muon at 1.0 on every instance; LiMuon#1 and LiMuon#2(r=4) at the given per-seed losses, at every sigma."""
    runs = []
    for sigma in sigmas:
        for seed, (full, low) in enumerate(zip(limuon1, low_rank)):
            runs += [{"task": "mat_ls", "sigma": sigma, "seed": seed, "optimizer": name, "final_loss": loss}
                     for name, loss in (("muon", 1.0), ("limuon1", full), ("limuon2_r4", low))]
    return runs


def charlm_runs(low_rank: list[float], limuon1: list[float]) -> list[dict]:
    runs = []
    for seed, (low, full) in enumerate(zip(low_rank, limuon1)):
        runs += [{"task": "charlm", "seed": seed, "optimizer": name, "final_val_loss": loss, "wall_time_s": 1.0}
                 for name, loss in (("muon", 1.5), ("limuon2_r8", low), ("limuon1", full))]
    return runs


def test_matls_clears_its_allowances_on_every_seed():
    claim = matls_claim(matls_runs([0.80, 0.82, 0.79, 0.81, 0.80, 0.83], [0.90] * 6), deciding=True)
    assert claim.verdict.word == "pass" and claim.ours == pytest.approx(0.90 / MATLS_TOLERANCE)
    assert "paired bootstrap over 6 seeds" in claim.verdict.interval.method and claim.threshold == 1.0
    assert claim.details["per_seed_final_loss"][0]["sigma0.5.limuon1"] == 0.80


def test_matls_fails_when_a_method_is_clearly_worse_at_one_sigma():
    worse_at_half = matls_runs([1.3, 1.35, 1.28, 1.32, 1.3, 1.31], [0.9] * 6, sigmas=(0.5,))
    runs = matls_runs([0.8] * 6, [0.9] * 6, sigmas=(0.1,)) + worse_at_half
    claim = matls_claim(runs, deciding=True)
    assert claim.verdict.word == "fail" and claim.verdict.interval.low > 1.0


def test_matls_straddles_when_the_seeds_disagree_about_the_allowance():
    claim = matls_claim(matls_runs([0.8, 1.2, 0.9, 1.1, 1.0, 0.95], [0.5] * 6), deciding=True)
    assert claim.verdict.word == "inconclusive"
    assert claim.verdict.interval.low < 1.0 < claim.verdict.interval.high


def test_charlm_claim_on_the_worse_of_the_two_limuons():
    better = charlm_claim(charlm_runs([1.40, 1.42, 1.41, 1.39, 1.40, 1.41], [1.35] * 6), deciding=True)
    assert better.verdict.word == "pass" and better.ours == pytest.approx(1.405 / 1.5)
    worse = charlm_claim(charlm_runs([1.40] * 6, [1.75, 1.8, 1.78, 1.76, 1.79, 1.77]), deciding=True)
    assert worse.verdict.word == "fail" and worse.ours == pytest.approx(1.775 / 1.5)
    noisy = charlm_claim(charlm_runs([1.2, 1.8, 1.4, 1.6, 1.5, 1.45], [1.3] * 6), deciding=True)
    assert noisy.verdict.word == "inconclusive"
    assert noisy.details["per_seed_final_val_loss"][1] == {"muon": 1.5, "limuon2_r8": 1.8, "limuon1": 1.3}


def test_smoke_and_single_seeds_leave_the_quality_claims_undecided():
    runs = matls_runs([0.8] * 6, [0.9] * 6)
    assert matls_claim(runs, deciding=False).verdict.word == "undecided"
    assert charlm_claim(charlm_runs([1.4] * 6, [1.4] * 6), deciding=False).verdict.word == "undecided"
    one_seed = matls_claim([r for r in runs if r["seed"] == 0], deciding=True)
    assert one_seed.verdict.word == "undecided" and "at least 2" in one_seed.verdict.reason
    assert one_seed.ours == pytest.approx(0.9 / MATLS_TOLERANCE)


def low_rank_run(estimator: int) -> dict:
    return {"task": "mat_ls", "optimizer": "limuon2_r4", "seed": 0,
            "state": {"per_matrix": [{"shape": [16, 8], "estimator": estimator, "previous_weights": 128}]}}


def test_memory_claim_is_exact():
    assert memory_claim([low_rank_run((16 + 8) * 4 + 4)], deciding=True).verdict.reason.startswith("exact:")
    assert memory_claim([low_rank_run((16 + 8) * 4 + 4)], deciding=True).verdict.word == "pass"
    assert memory_claim([low_rank_run(128)], deciding=True).verdict.word == "fail"
    assert memory_claim([low_rank_run(128)], deciding=False).verdict.word == "undecided"
    assert memory_claim([], deciding=True).verdict.word == "undecided"
