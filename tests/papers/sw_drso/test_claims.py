"""The sw_drso claim checks on hand-made per-seed results: t intervals of SW-DRSO's per-seed gains over each baseline
against the spec's gates give pass, fail or inconclusive; smoke profiles and missing baselines stay undecided."""
from __future__ import annotations

import pytest

from flows.sw_drso.claims import C3A_CONTROLS, claims, method_means, paired_differences

SPREAD = (-0.05, 0.0, 0.05)  # seed-to-seed accuracy offsets every method of a seed shares


def row(method: str, seed: int, clean: float, mca: float, outliers: float, wall: float = 1.0) -> dict:
    return {"task": "A", "encoder": "attention", "method": method, "seed": seed, "wall_time_s": wall,
            "accuracy": {"clean": clean, "outliers-0.3": outliers, "mCA": mca}}


BASELINES = ("erm", "aug", *C3A_CONTROLS)


def results(gain: dict[str, float], noise: float = 0.002, baselines=BASELINES,
            control_mca: dict[str, float] | None = None) -> list[dict]:
    """Three seeds; every baseline at clean 0.80, mCA 0.60 (or `control_mca`'s), outliers-0.3 0.40 (plus the seed's
    offset); SW-DRSO at those plus `gain` per key, with per-seed noise +-`noise` around it (mean exactly the gain)."""
    base = {"clean": 0.80, "mCA": 0.60, "outliers-0.3": 0.40}
    found = []
    for seed, (offset, wobble) in enumerate(zip(SPREAD, (-noise, 0.0, noise))):
        for method in baselines:
            own = base | {"mCA": (control_mca or {}).get(method, base["mCA"])}
            found.append(row(method, seed, *(own[k] + offset for k in ("clean", "mCA", "outliers-0.3"))))
        found.append(row("sw_drso", seed, *(base[k] + gain.get(k, 0.0) + offset + wobble
                                            for k in ("clean", "mCA", "outliers-0.3")), wall=2.0))
    return found


def decided(found: list[dict], deciding: bool = True) -> dict:
    return {c.id: c for c in claims(found, deciding)}


@pytest.mark.parametrize(("gain", "noise", "word"), [(0.10, 0.002, "pass"), (0.02, 0.002, "fail"), (0.05, 0.02, "inconclusive")])
def test_c1_mca_over_erm(gain, noise, word):
    found = decided(results({"mCA": gain}, noise))["C1"]
    assert found.ours == pytest.approx(gain) and found.verdict.word == word and found.threshold == 0.05
    assert found.verdict.interval.n == 3 and "t-interval" in found.verdict.interval.method
    assert found.details["per_seed_difference"] == pytest.approx([gain - noise, gain, gain + noise])


@pytest.mark.parametrize(("gain", "noise", "word"),
                         [(-0.01, 0.002, "pass"), (-0.08, 0.002, "fail"), (-0.04, 0.02, "inconclusive")])
def test_c2_clean_accuracy_kept(gain, noise, word):
    assert decided(results({"clean": gain}, noise))["C2"].verdict.word == word


@pytest.mark.parametrize(("gain", "noise", "word"), [(0.03, 0.002, "pass"), (-0.01, 0.002, "fail"), (0.01, 0.02, "inconclusive")])
def test_c3a_mca_over_every_control(gain, noise, word):
    found = decided(results({"mCA": gain}, noise))["C3a"]
    assert found.verdict.word == word and found.ours == pytest.approx(gain) and found.threshold == 0.01
    assert set(found.details["per_seed_difference"]) == set(C3A_CONTROLS)


def test_c3a_is_told_against_the_strongest_control():
    # SW-DRSO at mCA 0.63: 3 points over Random-weights, 0.2 over random deletion + outliers, 2 over Worst-of-K
    found = decided(results({"mCA": 0.03}, control_mca={"random_drop_outliers": 0.628, "worst_of_k": 0.61}))["C3a"]
    assert found.details["strongest_control"] == "random_drop_outliers" and found.ours == pytest.approx(0.002)
    assert found.verdict.word == "fail" and found.verdict.reason.startswith("random_drop_outliers decides (2 of 3")
    weaker = decided(results({"mCA": 0.03}, control_mca={"worst_of_k": 0.61}))["C3a"]
    assert weaker.verdict.word == "pass" and weaker.details["strongest_control"] == "worst_of_k"
    assert weaker.ours == pytest.approx(0.02)


@pytest.mark.parametrize(("gain", "noise", "word"), [(0.20, 0.002, "pass"), (0.0, 0.002, "fail"), (0.05, 0.02, "inconclusive")])
def test_c3b_outliers_over_aug(gain, noise, word):
    assert decided(results({"outliers-0.3": gain}, noise))["C3b"].verdict.word == word


def test_c4_is_reported_with_wall_times():
    found = decided(results({"mCA": 0.04}))
    assert found["C4"].verdict.word == "report" and found["C4"].ours == pytest.approx(0.04)
    assert found["C4"].details["wall_time_vs_erm"]["sw_drso"] == 2.0
    assert method_means(results({}))["erm"]["seeds"] == 3


def test_seeds_pair_by_index_and_only_where_both_ran():
    found = [r for r in results({"mCA": 0.1}) if not (r["method"] == "erm" and r["seed"] == 1)]
    assert paired_differences(found, "erm", "mCA") == pytest.approx([0.098, 0.102])


def test_smoke_and_missing_baselines_are_undecided():
    found = decided(results({"mCA": 0.1}), deciding=False)
    assert all(c.verdict.word == "undecided" and "decide_claims" in c.verdict.reason for c in found.values() if c.id != "C4")
    without = decided(results({"mCA": 0.1}, baselines=("erm",)))
    assert without["C1"].verdict.word == "pass"
    assert all(without[c].verdict.word == "undecided" and without[c].ours is None for c in ("C3a", "C3b"))
    assert "random_weights" in without["C3a"].verdict.reason
    only_random_weights = decided(results({"mCA": 0.1}, baselines=("erm", "aug", "random_weights")))["C3a"]
    assert only_random_weights.verdict.word == "undecided" and only_random_weights.ours is None
    assert "random_drop_outliers, worst_of_k runs" in only_random_weights.verdict.reason
