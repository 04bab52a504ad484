"""C1-C3 decided by the one rule: the greedy match exact and the sampler's TV on a bootstrap over blocks of draws;
the timings C2 and C3 on the median over alternated repeats, inconclusive below 9 repeats. Per claim a sample that
clears the gate passes, one wholly outside fails, a noisy one near the gate is inconclusive; smoke decides nothing."""
from __future__ import annotations

import numpy as np
import pytest

from flows.minedraft.claims import (C1_VOCAB, SAMPLER_BLOCKS, claim_c1, claim_c2, claim_c3, summarize, timing_model,
                                    total_variation)

PROBE = {"efficiency": 0.6}
P = np.random.default_rng(0).dirichlet(np.ones(C1_VOCAB))


def sampler(emitted_p: np.ndarray, draws: int = 1_000_000, seed: int = 1) -> dict:
    """What sampler_check returns, for a sampler that emits tokens with probabilities `emitted_p`, against P."""
    blocks = np.random.default_rng(seed).multinomial(draws // SAMPLER_BLOCKS, emitted_p, size=SAMPLER_BLOCKS)
    return {"draws": draws, "tv": total_variation(blocks, P), "acceptance": 0.5, "alpha": 0.5, "p": P.tolist(),
            "block_counts": blocks.tolist()}


def shifted(mass: float) -> np.ndarray:
    """P with `mass` moved from its largest to its smallest token: TV to P = mass."""
    q = P.copy()
    q[q.argmax()] -= mass
    q[q.argmin()] += mass
    return q


def greedy(mismatched: int = 0, gap: float = 1e-6) -> dict:
    ar = [[1, 2, 3]] * 200
    sd = [[1, 2, 4]] * mismatched + ar[mismatched:]
    ties = [{"config": "SD-1c", "k": 1, "request": i, "position": 2, "top2_gap": gap} for i in range(mismatched)]
    return {"runs": [{"config": "AR-1c", "k": 0, "outputs": ar}, {"config": "SD-1c", "k": 1, "outputs": sd}],
            "near_ties": ties}


def test_c1_greedy_match_is_exact_and_the_sampler_tv_on_a_bootstrap_over_blocks():
    clear = claim_c1(greedy(), sampler(P), True)
    assert clear.verdict.word == "pass" and clear.ours == 1.0
    assert "bootstrap over 100 blocks of 10,000 draws" in clear.verdict.reason
    assert claim_c1(greedy(), sampler(shifted(0.02)), True).verdict.word == "fail"  # TV 0.02
    assert claim_c1(greedy(), sampler(shifted(0.0035)), True).verdict.word == "inconclusive"  # TV near 0.005
    assert claim_c1(greedy(mismatched=4), sampler(P), True).verdict.word == "fail"  # 98% < 99%
    assert claim_c1(greedy(mismatched=1, gap=0.5), sampler(P), True).verdict.word == "fail"  # not a near-tie
    assert claim_c1(greedy(), sampler(P), False).verdict.word == "undecided"


def run(config: str, k: int, repeat: int, wall: float) -> dict:
    """One solve-stage run of 32 requests and 1000 tokens taking `wall` seconds."""
    return {"config": config, "k": k, "repeat": repeat, "wall_s": wall, "tokens": 1000, "throughput": 1000 / wall,
            "latency_s": wall / 32, "drafted": 100, "accepted": 60, "verifications": 50, "busy_draft_s": wall / 3,
            "busy_verify_s": wall / 2, "load_before": 1.0, "load_after": 1.0}


def runs(psd_over_sd: list[float]) -> list[dict]:
    """Per repeat, every configuration at k 2; PSD-2c takes 1/ratio of SD-1c's wall time."""
    found = []
    for repeat, ratio in enumerate(psd_over_sd):
        found += [run("AR-1c", 0, repeat, 6.0), run("SD-1c", 2, repeat, 4.0), run("PSD-2c", 2, repeat, 4.0 / ratio),
                  run("SD-2c", 2, repeat, 16.0)]
    return found


def c2(psd_over_sd: list[float]):
    found = runs(psd_over_sd)
    return claim_c2(summarize(found), found, PROBE, True)


def test_c2_needs_nine_alternated_repeats_then_decides_on_their_median():
    two = c2([0.87, 0.88])
    assert two.verdict.word == "inconclusive" and "fewer than 9 repeats" in two.verdict.reason
    assert two.ours == pytest.approx(0.875) and two.details["throughput_ratio_per_repeat"] == pytest.approx([0.87, 0.88])
    clear = c2([1.5, 1.45, 1.55, 1.5, 1.48, 1.52, 1.5, 1.47, 1.53])
    assert clear.verdict.word == "pass" and "median of 9 alternated repeats" in clear.verdict.interval.method
    assert c2([0.87, 0.85, 0.9, 0.86, 0.88, 0.87, 0.89, 0.84, 0.87]).verdict.word == "fail"
    assert c2([1.0, 1.3, 1.1, 1.2, 1.15, 1.25, 1.05, 1.18, 1.12]).verdict.word == "inconclusive"
    assert claim_c2(summarize(runs([1.5] * 9)), runs([1.5] * 9), PROBE, False).verdict.word == "undecided"


def stage_times() -> dict:
    """Batch-independent costs with no overhead: the timing model predicts S = 1 at k 2."""
    cost = {"c_d": 1.0, "c_v": 2.0, "accept": 0.0}
    return {"batches": [8, 16], "costs": {"8": {"2": cost}, "16": {"2": cost}}, "round_trip_s": {"8": {"2": 0.0}}}


def c3(psd_over_sd: list[float]):
    found = runs(psd_over_sd)
    return claim_c3(timing_model(summarize(found), found, stage_times()), True)


def test_c3_relative_error_per_repeat_against_the_timing_model():
    two = c3([1.45, 1.46])
    assert two.verdict.word == "inconclusive" and "fewer than 9 repeats" in two.verdict.reason
    assert two.details["by_k"][0]["relative_error_per_repeat"] == pytest.approx([0.45, 0.46])
    assert c3([1.05, 1.02, 0.98, 1.0, 1.03, 0.97, 1.01, 1.04, 0.99]).verdict.word == "pass"
    far = c3([1.45, 1.42, 1.48, 1.44, 1.46, 1.43, 1.47, 1.45, 1.41])
    assert far.verdict.word == "fail" and far.ours == pytest.approx(0.45)
    assert c3([1.1, 1.3, 1.15, 1.25, 1.2, 1.22, 1.12, 1.28, 1.18]).verdict.word == "inconclusive"
    assert claim_c3(timing_model(summarize(runs([1.0] * 9)), runs([1.0] * 9), stage_times()), False).verdict.word \
        == "undecided"
