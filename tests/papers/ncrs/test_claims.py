"""The ncrs claim checks on hand-made per-instance samples (clear, missed, straddling, never reached), the step
calibration, and determinism of a calibrated batch."""
from __future__ import annotations

import numpy as np
import pytest

from flows.ncrs.claims import claims, slope
from flows.ncrs.experiments import calibrated_run, make_instances, pick_step, voting_run, wrong_probability
from tasks.comparison.objectives import ActiveSubspace
from tasks.comparison.oracles import Noise


def offsets(n: int, seed: int) -> np.ndarray:
    """n evenly spaced offsets in [-1.5, 1.5] in an order given by `seed`: symmetric, so a sample's mean and median
    are known exactly and a straddling sample sits on its gate by construction."""
    return np.random.default_rng(seed).permutation(np.linspace(-1.5, 1.5, n))


def spread(median: float, sigma: float, seed: int, n: int = 10) -> np.ndarray:
    """n values of N whose median is `median` (up to the same factor for every sample of n), spread by a factor
    exp(1.5 sigma) either way."""
    return median * np.exp(sigma * offsets(n, seed))


def _cells(N20=None, N200=None, N200_small=None):
    """Hand-made cells: ncrs at p = 0.4 over d, at p = 0.1 at d = 200 (same instances); the baselines at p = 0.4."""
    N20 = spread(400.0, 0.05, seed=1) if N20 is None else N20
    N200 = spread(440.0, 0.05, seed=2) if N200 is None else N200
    N200_small = spread(4000.0, 0.05, seed=3) if N200_small is None else N200_small
    cells = {}
    for d, hits in ((20, N20), (63, np.full(10, 420.0)), (200, N200)):
        for m in ("ncrs", "ngd", "exact", "cma_es", "one_plus_one"):
            cells[(m, d, 0.4)] = {"hit": np.asarray(hits), "step": 0.05}
        cells[("ncrs", d, 0.1)] = cells[("ngd", d, 0.1)] = {"hit": np.full(10, 4000.0), "step": 0.02}
    cells[("ncrs", 200, 0.1)] = {"hit": np.asarray(N200_small), "step": 0.02}
    return cells


def _voting(single=0.3, voting=0.1, sigma=0.01, n=6):
    """Per-instance wrong-decision rates on the voting runs' pairs, one answer's of mean `single` and the majority's
    of mean `voting`, spread by +-1.5 sigma, both oracles; the single-vote runs' pairs hold rates of their own."""
    def run(one, votes, seed):
        return {"pair_wrong_one": one + sigma * offsets(n, seed), "pair_wrong_votes": votes + sigma * offsets(n, seed + 10),
                "wrong_fraction": np.full(n, 0.2), "best_grad": np.ones(n), "hit": np.r_[1.0, np.inf, np.full(n - 2, 3.0)]}
    return {"sqrt_gap": {"single": run(0.45, 0.44, 1), "voting": run(single, voting, 2)},
            "bradley_terry": {"single": run(0.45, 0.44, 3), "voting": run(single, voting, 4)}}


K_CELLS = {2: {"hit": np.array([100.0]), "step": 0.05}, 8: {"hit": np.array([380.0]), "step": 0.02}}


def verdicts(cells=None, voting=None, dims=(20, 63, 200), margins=(0.1, 0.4), deciding=True) -> dict[str, str]:
    found = claims(_cells() if cells is None else cells, list(dims), list(margins), voting or _voting(), 9, K_CELLS,
                   deciding=deciding)
    return {c.id: c.verdict.word for c in found}


def test_clear_samples_pass_with_their_intervals_and_details():
    c1, c2, c3, r4 = claims(_cells(np.full(10, 400.0), np.full(10, 440.0)), [20, 63, 200], [0.1, 0.4], _voting(), 9,
                            K_CELLS, deciding=True)
    assert (c1.verdict.word, c2.verdict.word, c3.verdict.word) == ("pass", "pass", "pass")
    assert c1.ours == pytest.approx(1.1) and c1.verdict.interval.low == pytest.approx(1.1)
    assert "paired bootstrap over 10 instances" in c1.verdict.interval.method
    assert "paired bootstrap over 10 instances" in c2.verdict.interval.method
    assert c1.details["slope_log_N_vs_log_d"] == pytest.approx(slope([20, 63, 200], [400, 420, 440]))
    assert c1.details["N_per_instance"]["200"] == [440.0] * 10 and len(c2.details["N_per_instance"]["p = 0.1"]) == 10
    assert c3.ours == pytest.approx(1 / 3, rel=0.1) and c3.details["by_oracle"]["sqrt_gap"]["reached_single"] == 5
    gap = c3.details["by_oracle"]["bradley_terry"]
    assert len(gap["on_voting_run_pairs"]["wrong_majority_per_instance"]) == 6
    assert gap["on_single_vote_run_pairs"]["ratio"] == pytest.approx(0.44 / 0.45)  # reported, not gated
    assert r4.ours == pytest.approx(3.8) and r4.verdict.word == "report"


def test_c1_resamples_each_instance_at_both_dimensions_together():
    # instance i starts from the same z0 at every d: a wide spread across instances that N(200) follows instance by
    # instance leaves the paired ratio of medians at 1.05 in every resample
    n20 = spread(400.0, 1.0, seed=6)
    c1 = claims(_cells(N20=n20, N200=1.05 * n20), [20, 63, 200], [0.1, 0.4], _voting(), 9, K_CELLS, deciding=True)[0]
    assert c1.verdict.word == "pass" and c1.verdict.interval.low == pytest.approx(1.05)
    assert c1.verdict.interval.high == pytest.approx(1.05)


def test_c3_is_read_on_the_voting_runs_pairs_only():
    # the single-vote runs' pairs (ratio 0.44 / 0.45) would fail the gate; the voting runs' pairs decide
    c3 = claims(_cells(), [20, 63, 200], [0.1, 0.4], _voting(single=0.3, voting=0.1), 9, K_CELLS, deciding=True)[2]
    assert c3.verdict.word == "pass" and c3.ours == pytest.approx(1 / 3, rel=0.1)
    assert "the pairs queried by the 9-vote runs" in c3.details["setting"]


def test_clear_misses_fail():
    # N grows with d; N(p = 0.1) far below p^-2
    cells = _cells(N200=spread(1600.0, 0.05, seed=4), N200_small=spread(2000.0, 0.05, seed=5))
    assert verdicts(cells, _voting(voting=0.27)) == {"C1": "fail", "C2": "fail", "C3": "fail", "R4": "report"}


def test_noisy_samples_near_the_gates_are_inconclusive():
    # ten instances per side spread by a factor 4.5 either way, each ratio on (C2, C3) or inside (C1) its gate
    cells = _cells(N20=spread(400.0, 1.0, seed=6), N200=spread(400.0, 1.0, seed=7), N200_small=spread(1200.0, 1.0, seed=8))
    assert verdicts(cells, _voting(single=0.3, voting=0.18, sigma=0.1)) == \
        {"C1": "inconclusive", "C2": "inconclusive", "C3": "inconclusive", "R4": "report"}


def test_a_median_n_never_reached_fails_and_single_misses_widen_the_interval():
    never_at_200 = _cells(N200=np.full(10, np.inf))  # C1's numerator and C2's denominator
    never_at_small_p = _cells(N200_small=np.r_[np.full(6, np.inf), np.full(4, 4000.0)])  # C2's numerator
    for cells, failed in ((never_at_200, {"C1", "C2"}), (never_at_small_p, {"C2"})):
        found = claims(cells, [20, 63, 200], [0.1, 0.4], _voting(), 9, K_CELLS, deciding=True)
        assert {c.id for c in found if c.verdict.word == "fail"} == failed
        assert all("target never reached: median N beyond the budget" in c.verdict.reason for c in found if c.id in failed)
    some_missed = _cells(N200_small=np.r_[np.full(3, np.inf), spread(4000.0, 0.05, seed=9, n=7)])
    c2 = claims(some_missed, [20, 63, 200], [0.1, 0.4], _voting(), 9, K_CELLS, deciding=True)[1]
    assert c2.ours == pytest.approx(10.0, rel=0.1) and c2.verdict.interval.high == np.inf
    assert c2.details["N_per_instance"]["p = 0.1"][:3] == [None] * 3


def test_smoke_and_missing_settings_are_not_decided():
    assert set(verdicts(deciding=False).values()) == {"undecided", "report"}
    lacking = claims(_cells(), [20, 63], [0.4], _voting(), 9, K_CELLS, deciding=True)
    assert [c.verdict.word for c in lacking[:2]] == ["undecided", "undecided"]
    assert "the profile lacks d = 20 and 200" in lacking[0].verdict.reason


def test_the_step_is_picked_by_median_n_then_gradient_norm():
    hits = np.array([[np.inf, np.inf], [300.0, 500.0], [300.0, 500.0]])
    best = np.array([[0.2, 0.3], [0.05, 0.05], [0.01, 0.01]])
    assert pick_step([0.02, 0.05, 0.1], hits, best)[0] == 0.1


def test_calibrated_runs_and_voting_runs_are_deterministic():
    inst, cal = make_instances(15, 2, [0, 1, 2], 0, 3.0), make_instances(15, 2, [100], 0, 3.0)
    a, b = (calibrated_run("ncrs", inst, cal, Noise("margin", p=0.4), [0.05, 0.1], 1500, 0.15, 3, 1e-3) for _ in range(2))
    assert np.array_equal(a["hit"], b["hit"]) and a["step"] == b["step"] and np.array_equal(a["best_grad"], b["best_grad"])
    single = voting_run(inst, Noise("sqrt_gap"), 0.05, 1, 900, 0.15, 5, judge_votes=9)
    voting = voting_run(inst, Noise("sqrt_gap"), 0.05, 9, 900, 0.15, 5, judge_votes=9)
    assert single["decisions"] == 900 and voting["decisions"] == 100
    assert 0 <= voting["wrong_fraction"].mean() <= 1
    again = voting_run(inst, Noise("sqrt_gap"), 0.05, 9, 900, 0.15, 5, judge_votes=9)
    assert np.array_equal(voting["pair_wrong_votes"], again["pair_wrong_votes"])


def test_instances_start_from_the_same_reduced_point_at_every_dimension():
    small, large = make_instances(20, 4, [0, 1, 2], 0, 3.0), make_instances(200, 4, [0, 1, 2], 0, 3.0)
    z_small, z_large = (np.einsum("cd,cdk->ck", i.x0, i.A) for i in (small, large))
    assert np.allclose(z_small, z_large, atol=1e-12) and not np.allclose(z_small[0], z_small[1])
    assert np.allclose(ActiveSubspace(small.A)(small.x0), ActiveSubspace(large.A)(large.x0), atol=1e-12)
    assert np.linalg.norm(large.x0 - np.einsum("cdk,ck->cd", large.A, z_large), axis=1).min() > 5  # w is there
    normed = make_instances(50, 8, [0, 1], 0, 3.0, z0_norm=3.0)
    assert np.allclose(np.linalg.norm(np.einsum("cd,cdk->ck", normed.x0, normed.A), axis=1), 3.0)


def test_the_pair_judge_is_the_exact_law_of_one_answer_and_of_the_majority():
    """Wrong-decision probabilities on one pair: one answer wrong with 1 - q, a majority of 9 with P(Bin(9, q) <= 4),
    and over many simulated oracle answers on fixed pairs the majority's wrong frequency matches its probability."""
    q = np.array([0.5, 0.6, 0.9, 1.0])
    assert np.allclose(wrong_probability(q, 1), 1 - q)
    assert wrong_probability(np.array([0.6]), 9)[0] == pytest.approx(0.2665, abs=1e-4)
    assert wrong_probability(np.array([0.5]), 9)[0] == pytest.approx(0.5) and wrong_probability(q, 9)[-1] == 0
    answers = np.random.default_rng(0).random((20000, 9)) < 0.6
    assert np.mean(answers.sum(axis=1) <= 4) == pytest.approx(0.2665, abs=0.01)


def test_both_deciders_are_judged_on_the_pairs_of_one_run():
    """Under the uniform margin every pair's answer is right with 0.6 (gaps are never 0 here): on each pair one vote
    is wrong with 0.4 and a majority of 9 with P(Bin(9, 0.6) <= 4), whatever the run visited. Under sqrt-gap the
    majority's rate on the same pairs is below the one vote's on every instance."""
    inst = make_instances(15, 2, [0, 1, 2], 0, 3.0)
    margin = voting_run(inst, Noise("margin", p=0.1), 0.05, 9, 450, 0.15, 5, judge_votes=9)
    assert np.allclose(margin["pair_wrong_one"], 0.4) and np.allclose(margin["pair_wrong_votes"], 0.26657, atol=1e-5)
    gap = voting_run(inst, Noise("sqrt_gap"), 0.05, 1, 300, 0.15, 5, judge_votes=9)
    assert np.all(gap["pair_wrong_votes"] < gap["pair_wrong_one"]) and np.all(gap["pair_wrong_one"] < 0.5)
