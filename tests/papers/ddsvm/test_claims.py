"""The claim checks C1-C4 on hand-made per-run rows: intervals over paired seeds against the spec's gates give pass,
fail or inconclusive; smoke profiles, missing baselines and too few timed pairs stay undecided."""
from __future__ import annotations

import numpy as np
import pytest

from flows.ddsvm.claims import claims, difference_interval, paired, reduction

SEEDS = 10
BASE = 10.0  # CE's head error (%), the same on every seed
SPREAD = np.linspace(-3.0, 3.0, SEEDS)  # split-to-split error offsets every method of a seed shares


def noise(size: float, key: int) -> np.ndarray:
    """Per-seed noise of standard deviation `size` and mean exactly 0."""
    draws = np.random.default_rng(key).normal(size=SEEDS)
    return size * (draws - draws.mean()) / draws.std()


def rows(dd_svm: float = 5.0, ce_svm: float = 8.0, cos_head: float = 7.0, noisy: float = 0.1,
         time_ratio: float = 1.5, time_noise: float = 0.1, seeds: int = SEEDS, methods=("ce", "cosine", "ddsvm")) -> list[dict]:
    """Per-run rows at k = 10: mean errors as given (CE's head at BASE) plus the shared spread; DDSVM's svm error
    carries its own noise of `noisy` points, its wall time is `time_ratio` x CE's (+- `time_noise`)."""
    ratio = time_ratio + noise(time_noise, 2)
    errors = {"ce": (BASE, ce_svm), "cosine": (cos_head, cos_head)}
    out = []
    for s in range(seeds):
        own = {"ce": errors["ce"], "cosine": errors["cosine"], "ddsvm": (dd_svm, dd_svm + noise(noisy, 1)[s])}
        times = {"ce": 4.0 + s, "cosine": 4.0 + s, "ddsvm": (4.0 + s) * ratio[s]}
        for method in methods:
            head, svm = own[method]
            out.append({"method": method, "k": 10, "seed": s, "head_error": head + SPREAD[s], "svm_error": svm + SPREAD[s],
                        "wall_time_s": times[method], "margin_min": 0.0, "margin_mean": 0.1})
    return out[::-1]  # any order: the claims pair by seed index


def decided(found: list[dict], deciding: bool = True) -> dict:
    return {c.id: c for c in claims(found, 10, [10], deciding, seed=0)}


@pytest.mark.parametrize(("dd_svm", "noisy", "word"), [(8.0, 0.1, "pass"), (10.0, 0.1, "fail"), (9.44, 2.0, "inconclusive")])
def test_c1_ratio_of_mean_errors(dd_svm, noisy, word):
    found = decided(rows(dd_svm=dd_svm, noisy=noisy))["C1"]
    assert found.ours == pytest.approx(dd_svm / BASE) and found.verdict.word == word
    assert "paired bootstrap over 10 seeds" in found.verdict.interval.method


@pytest.mark.parametrize(("dd_svm", "noisy", "word"), [(6.0, 0.3, "pass"), (9.0, 0.3, "fail"), (8.0, 2.0, "inconclusive")])
def test_c2_difference_to_the_static_hybrid(dd_svm, noisy, word):
    found = decided(rows(dd_svm=dd_svm, noisy=noisy))["C2"]
    assert found.ours == pytest.approx(dd_svm - 8.0) and found.threshold == 0.0 and found.verdict.word == word
    assert "t-interval" in found.verdict.interval.method


@pytest.mark.parametrize(("dd_svm", "noisy", "word"), [(6.0, 0.3, "pass"), (8.5, 0.3, "fail"), (7.5, 2.0, "inconclusive")])
def test_c3_difference_to_cosine(dd_svm, noisy, word):
    found = decided(rows(dd_svm=dd_svm, noisy=noisy))["C3"]
    assert found.ours == pytest.approx(dd_svm - 7.0) and found.threshold == 0.5 and found.verdict.word == word


@pytest.mark.parametrize(("ratio", "spread", "word"), [(1.5, 0.1, "pass"), (3.0, 0.1, "fail"), (2.5, 0.6, "inconclusive")])
def test_c4_median_time_ratio(ratio, spread, word):
    found = decided(rows(time_ratio=ratio, time_noise=spread))["C4"]
    assert found.verdict.word == word and len(found.details["per_seed_ratio"]) == SEEDS
    assert "median of 10" in found.verdict.interval.method


def test_c4_needs_nine_timed_pairs():
    found = decided(rows(seeds=8))["C4"]
    assert found.verdict.word == "undecided" and "needs 9" in found.verdict.reason and found.ours is not None


def test_smoke_and_a_missing_cosine_are_undecided():
    assert all(c.verdict.word == "undecided" and "decide_claims" in c.verdict.reason
               for c in decided(rows(), deciding=False).values())
    c3 = decided(rows(methods=("ce", "ddsvm")))["C3"]
    assert c3.verdict.word == "undecided" and "cosine" in c3.verdict.reason and c3.ours is None


def test_seeds_are_paired_by_index_and_only_where_both_ran():
    found = [r for r in rows() if not (r["method"] == "ce" and r["seed"] == 3)]
    pairs = paired(found, 10, ("ddsvm", "svm_error"), ("ce", "head_error"))
    assert len(pairs) == SEEDS - 1 and np.allclose(pairs[:, 1] - pairs[:, 0], BASE - 5.0, atol=0.5)


def test_difference_interval_and_reduction():
    interval = difference_interval(np.array([-1.0, -2.0, -3.0]))  # t(0.975, 2) = 4.303, sd 1: half width 2.484
    assert interval["mean"] == -2.0 and interval["high"] == pytest.approx(-2.0 + 4.3027 / np.sqrt(3), abs=1e-3)
    assert "low" not in difference_interval(np.array([1.0]))
    r = reduction(rows(dd_svm=8.0, noisy=0.0), 10)
    assert r["relative_reduction"] == pytest.approx(0.2) and r["absolute_reduction_pt"] == pytest.approx(2.0)
    assert r["wins"] == SEEDS and len(r["per_seed"]["method"]) == SEEDS
