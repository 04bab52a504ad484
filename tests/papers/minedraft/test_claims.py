"""C1-C3 decided by the one rule: the greedy match exact and the sampler's TV on a bootstrap over blocks of draws;
the timings C2 and C3 on the median over alternated repeats, inconclusive below 9 repeats. Per claim a sample that
clears the gate passes, one wholly outside fails, a noisy one near the gate is inconclusive; smoke decides nothing."""
from __future__ import annotations

import numpy as np
import pytest

from flows.minedraft.claims import (C1_VOCAB, SAMPLER_BLOCKS, claim_c1, claim_c2, claim_c3, host_check, summarize,
                                    timing_model, total_variation)
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


def run(config: str, k: int, repeat: int, wall: float, busy: tuple[float, float] | None = None, steps: int = 20,
        round_trip: float = 0.0) -> dict:
    """One solve-stage run of 32 requests and 1000 tokens taking `wall` seconds over `steps` steps, its drafter and
    verifier busy for `busy` seconds (a third and half of the wall when absent); SD-1c and PSD-2c carry the
    calibrations around them (the busy costs per step, `round_trip` for PSD's o')."""
    busy_draft, busy_verify = busy or (wall / 3, wall / 2)
    found = {"config": config, "k": k, "repeat": repeat, "wall_s": wall, "tokens": 1000, "throughput": 1000 / wall,
             "latency_s": wall / 32, "drafted": 100, "accepted": 60, "verifications": 50, "steps": steps,
             "busy_draft_s": busy_draft, "busy_verify_s": busy_verify, "load_before": 1.0, "load_after": 1.0}
    if config in ("SD-1c", "PSD-2c"):
        side = {"draft_s": busy_draft / steps, "verify_s": busy_verify / steps, "round_trip_s": round_trip}
        found["calibration"] = {"before": side, "after": side}
    return found


def runs(psd_over_sd: list[float]) -> list[dict]:
    """Per repeat, every configuration at k 2; PSD-2c takes 1/ratio of SD-1c's wall time. SD-1c's steps cost 0.08 s
    drafting and 0.12 s verifying (the ideal ceiling 1.67); PSD's half steps, twice as many, half that each, with
    0.01 s of round trip: the timing model predicts 4.0 / (40 x 0.07) = 1.43."""
    found = []
    for repeat, ratio in enumerate(psd_over_sd):
        found += [run("AR-1c", 0, repeat, 6.0), run("SD-1c", 2, repeat, 4.0, (1.6, 2.4)),
                  run("PSD-2c", 2, repeat, 4.0 / ratio, (1.6, 2.4), steps=40, round_trip=0.01),
                  run("SD-2c", 2, repeat, 16.0)]
    return found


GOOD_HOST = host_check([{"efficiency": e} for e in (0.9, 0.92, 0.95, 0.91, 0.93, 0.9, 0.94, 0.92, 0.96, 0.93)], 1.67)


def c2(psd_over_sd: list[float], host=GOOD_HOST):
    found = runs(psd_over_sd)
    return claim_c2(summarize(found), found, host, True)


def test_c2_needs_nine_alternated_repeats_then_decides_on_their_median():
    two = c2([0.87, 0.88])
    assert two.verdict.word == "inconclusive" and "fewer than 9 repeats" in two.verdict.reason
    assert two.ours == pytest.approx(0.875) and two.details["throughput_ratio_per_repeat"] == pytest.approx([0.87, 0.88])
    clear = c2([1.5, 1.45, 1.55, 1.5, 1.48, 1.52, 1.5, 1.47, 1.53])
    assert clear.verdict.word == "pass" and "median of 9 alternated repeats" in clear.verdict.interval.method
    assert clear.details["ideal_ceiling_by_k"] == {"2": pytest.approx(4.0 / 2.4)}
    assert c2([0.87, 0.85, 0.9, 0.86, 0.88, 0.87, 0.89, 0.84, 0.87]).verdict.word == "fail"
    assert c2([1.0, 1.3, 1.1, 1.2, 1.15, 1.25, 1.05, 1.18, 1.12]).verdict.word == "inconclusive"
    assert claim_c2(summarize(runs([1.5] * 9)), runs([1.5] * 9), GOOD_HOST, False).verdict.word == "undecided"


def test_the_host_probe_bounds_what_c2_and_c3_can_say():
    # threshold = 1.15 / ceiling: 0.69 at the ceiling 1.67 of these runs
    assert GOOD_HOST[0].word == "pass" and GOOD_HOST[1]["threshold"] == pytest.approx(1.15 / 1.67)
    weak = host_check([{"efficiency": e} for e in (0.55, 0.6, 0.58, 0.62, 0.57, 0.6, 0.59, 0.61, 0.56, 0.6)], 1.67)
    assert weak[0].word == "fail" and weak[1]["efficiency"] == pytest.approx(0.595)
    straddling = host_check([{"efficiency": e} for e in (0.5, 0.9, 0.6, 0.8, 0.7, 0.65, 0.75, 0.55, 0.85, 0.7)], 1.67)
    assert straddling[0].word == "inconclusive"
    failing = [0.87, 0.85, 0.9, 0.86, 0.88, 0.87, 0.89, 0.84, 0.87]
    for host in (weak, straddling):
        claim = c2(failing, host)
        assert claim.verdict.word == "inconclusive" and claim.verdict.reason.startswith("inconclusive on this host")
        assert f"{host[1]['efficiency']:.3g}" in claim.verdict.reason and "the runs alone read fail" in claim.verdict.reason
        assert c3([1.43] * 9, host).verdict.word == "inconclusive"
    assert c2(failing).verdict.word == "fail" and c3([1.43] * 9).verdict.word == "pass"
    few = host_check([{"efficiency": 0.99}, {"efficiency": 0.98}], 1.67)  # two rounds cannot show the host adequate
    assert few[0].word == "inconclusive" and c2(failing, few).verdict.word == "inconclusive"


def c3(psd_over_sd: list[float], host=GOOD_HOST):
    found = runs(psd_over_sd)
    return claim_c3(timing_model(summarize(found), found), host, True)


def test_c3_relative_error_per_repeat_against_the_runs_own_costs():
    predicted = 4.0 / (40 * (0.06 + 0.01))
    two = c3([1.45, 1.46])
    assert two.verdict.word == "inconclusive" and "fewer than 9 repeats" in two.verdict.reason
    row = two.details["by_k"][0]
    assert row["predicted"] == pytest.approx(predicted) and row["predicted_calibrated"] == pytest.approx(predicted)
    assert row["relative_error_per_repeat"] == pytest.approx([1.45 / predicted - 1, 1.46 / predicted - 1])
    assert row["half_over_full"] == {"draft_s": pytest.approx(0.5), "verify_s": pytest.approx(0.5)}
    assert row["calibration_drift"] == 0 and row["busy_over_calibrated"]["PSD-2c"]["verify_s"] == pytest.approx(1.0)
    near = [predicted * f for f in (1.05, 1.02, 0.98, 1.0, 1.03, 0.97, 1.01, 1.04, 0.99)]
    assert c3(near).verdict.word == "pass"
    # no overlap at all: PSD's wall is its busy sum, 4.0 + 0.4 s, against the model's 2.8 s
    far = c3([4.0 / 4.4] * 9)
    assert far.verdict.word == "fail" and far.ours == pytest.approx(4.0 / 4.4 / predicted - 1)
    assert c3([predicted * f for f in (1.1, 1.3, 1.15, 1.25, 1.2, 1.22, 1.12, 1.28, 1.18)]).verdict.word \
        == "inconclusive"
    assert claim_c3(timing_model(summarize(runs([1.0] * 9)), runs([1.0] * 9)), GOOD_HOST, False).verdict.word \
        == "undecided"


def test_calibration_drift_and_contention_are_reported():
    found = runs([1.43] * 9)
    for r in found:
        if r["config"] == "PSD-2c":
            r["calibration"]["after"] = {"draft_s": 0.06, "verify_s": 0.09, "round_trip_s": 0.01}  # +50% verify
    row = timing_model(summarize(found), found)[0]
    assert row["calibration_drift"] == pytest.approx(0.25)  # the median over both runs of each repeat: 0 and 0.5
    assert row["busy_over_calibrated"]["PSD-2c"]["verify_s"] == pytest.approx(0.06 / 0.075)
