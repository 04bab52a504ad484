"""The claim checks C1-C6 on hand-made per-run rows: intervals over paired seeds against the spec's gates give pass,
fail or inconclusive; smoke profiles, missing baselines and too few timed pairs or k's stay undecided."""
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
         time_ratio: float = 1.5, time_noise: float = 0.1, seeds: int = SEEDS, methods=("ce", "cosine", "ddsvm"),
         k: int = 10, dd_head: float | None = None, data: str = "digits") -> list[dict]:
    """Per-run rows at k: mean errors as given (CE's head at BASE) plus the shared spread; DDSVM's svm error
    carries its own noise of `noisy` points (its head error is `dd_head`, else its svm error without the noise),
    its wall time is `time_ratio` x CE's (+- `time_noise`)."""
    ratio = time_ratio + noise(time_noise, 2)
    errors = {"ce": (BASE, ce_svm), "cosine": (cos_head, cos_head)}
    out = []
    for s in range(seeds):
        own = {"ce": errors["ce"], "cosine": errors["cosine"],
               "ddsvm": (dd_svm if dd_head is None else dd_head, dd_svm + noise(noisy, 1)[s])}
        times = {"ce": 4.0 + s, "cosine": 4.0 + s, "ddsvm": (4.0 + s) * ratio[s]}
        for method in methods:
            head, svm = own[method]
            out.append({"method": method, "data": data, "k": k, "seed": s, "head_error": head + SPREAD[s],
                        "svm_error": svm + SPREAD[s], "wall_time_s": times[method], "margin_min": 0.0,
                        "margin_mean": 0.1})
    return out[::-1]  # any order: the claims pair by seed index


def decided(found: list[dict], deciding: bool = True, trend_ks: tuple[int, ...] = (), shapes_k: int | None = None) -> dict:
    ks = sorted({r["k"] for r in found if r["data"] == "digits"})
    return {c.id: c for c in claims(found, 10, ks, list(trend_ks), shapes_k, deciding, seed=0)}


@pytest.mark.parametrize(("dd_svm", "noisy", "word"), [(6.4, 0.1, "pass"), (8.0, 0.1, "fail"), (7.55, 2.0, "inconclusive")])
def test_c1_ratio_of_mean_errors_at_the_same_readout(dd_svm, noisy, word):
    """C1 divides DDSVM's SVM error by CE + post-hoc SVM's (8.0), not by CE's head error (BASE)."""
    found = decided(rows(dd_svm=dd_svm, noisy=noisy))["C1"]
    assert found.ours == pytest.approx(dd_svm / 8.0) and found.verdict.word == word
    assert "paired bootstrap over 10 seeds" in found.verdict.interval.method


def test_c1_fails_where_only_the_readout_differs():
    """DDSVM no better than CE + post-hoc SVM fails C1, although both beat CE's head by 20 %: the former C1
    (different read-outs) stays in the details, and so does head against head."""
    found = decided(rows(dd_svm=8.0, ce_svm=8.0, dd_head=9.0))["C1"]
    assert found.verdict.word == "fail"
    assert found.details["svm_vs_ce_head"]["relative_reduction"] == pytest.approx(0.2)
    heads = found.details["head_vs_ce_head"]
    assert heads["relative_reduction"] == pytest.approx(0.1) and heads["ratio_low"] <= 0.9 <= heads["ratio_high"]


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


TREND_KS = (3, 5, 10, 30, 50)


def trend_rows(reductions: dict[int, float], noisy: float = 0.1, seeds: int = SEEDS) -> list[dict]:
    """Rows at every k with DDSVM's svm error (1 - reduction) x CE + post-hoc SVM's (8.0)."""
    return [r for k, cut in reductions.items()
            for r in rows(dd_svm=8.0 * (1 - cut), noisy=noisy, seeds=seeds, methods=("ce", "ddsvm"), k=k)]


def slope(reductions: dict[int, float]) -> float:
    """The least-squares slope, in % per decade of k, of the reductions against log10 k."""
    return float(np.polyfit(np.log10(list(reductions)), [100 * r for r in reductions.values()], 1)[0])


@pytest.mark.parametrize(("reductions", "noisy", "word"), [
    ({3: 0.40, 5: 0.35, 10: 0.30, 30: 0.20, 50: 0.15}, 0.1, "pass"),  # the gain shrinks as data grows
    ({3: 0.15, 5: 0.20, 10: 0.30, 30: 0.40, 50: 0.45}, 0.1, "fail"),  # it grows: the old run's picture
    ({3: 0.31, 5: 0.30, 10: 0.30, 30: 0.30, 50: 0.29}, 2.5, "inconclusive"),  # flat within the seeds' noise
])
def test_c5_trend_of_the_gain_in_k(reductions, noisy, word):
    found = decided(trend_rows(reductions, noisy), trend_ks=TREND_KS)["C5"]
    assert found.verdict.word == word and found.threshold == 0.0
    assert found.ours == pytest.approx(slope(reductions), abs=1.0)
    assert "bootstrap over 10 and 10 and 10 and 10 and 10 seeds per k" in found.verdict.interval.method
    gated = found.details["relative_svm"]
    assert gated["smallest_minus_largest_k"] == pytest.approx(100 * (reductions[3] - reductions[50]), abs=1.5)
    assert set(found.details) >= {"relative_head", "absolute_svm_pt"}


def test_c5_undecided_without_enough_ks_or_seeds_or_when_smoke():
    few = decided(trend_rows({5: 0.3, 10: 0.3}), trend_ks=(5, 10))["C5"]
    assert few.verdict.word == "undecided" and "needs >= 3 k's" in few.verdict.reason and few.ours is None
    lonely = decided(trend_rows({3: 0.3, 5: 0.3, 10: 0.3}, seeds=1), trend_ks=(3, 5, 10))["C5"]
    assert lonely.verdict.word == "undecided" and "{3: 1, 5: 1, 10: 1}" in lonely.verdict.reason
    smoke = decided(trend_rows({3: 0.4, 10: 0.3, 50: 0.1}), deciding=False, trend_ks=(3, 10, 50))["C5"]
    assert smoke.verdict.word == "undecided" and smoke.ours is not None
    assert decided(rows())["C5"].verdict.word == "undecided"  # no trend_ks: C5 is not run


TRAINING = {"epochs": 1, "lr": 1e-3, "weight_decay": 0.0, "svm_C": 1.0, "feature_dim": 8, "width": 2,
            "cosine_scale": 10.0, "augment_shift": 0, "upsample": 1}
PARAMS = {"seed": 0, "gate_k": 10, "methods": {"ce": {"loss": "ce"}, "ddsvm": {"loss": "ddsvm"}}, "training": TRAINING,
          "decide_claims": True}
BOTH = ["ce", "ddsvm"]


def test_every_trend_k_needs_a_sweep_of_ce_and_ddsvm():
    from pydantic import ValidationError

    from flows.ddsvm.params import Params

    base = PARAMS | {"sweeps": [{"k": 10, "seeds": 2, "methods": BOTH}, {"k": 3, "seeds": 2, "methods": ["ce"]},
                              {"data": "shapes", "k": 5, "seeds": 2, "methods": BOTH}]}
    assert Params(**base, trend_ks=[10]).trend_ks == [10]
    with pytest.raises(ValidationError, match=r"trend_ks: \[3, 5\] need a digits sweep"):
        Params(**base, trend_ks=[10, 3, 5])  # a sweep of the depth images at k = 5 is not one of the digits


def with_depth_images(dd_svm: float, noisy: float, seeds: int = SEEDS) -> list[dict]:
    """Digits rows where DDSVM is far ahead (4.0 against 8.0) and depth-image rows at the same k with `dd_svm`."""
    return rows(dd_svm=4.0) + rows(dd_svm=dd_svm, noisy=noisy, seeds=seeds, methods=("ce", "ddsvm"), data="shapes")


@pytest.mark.parametrize(("dd_svm", "noisy", "word"), [(6.0, 0.3, "pass"), (9.0, 0.3, "fail"), (8.0, 2.0, "inconclusive")])
def test_c6_is_c2_on_the_depth_images_alone(dd_svm, noisy, word):
    """C6: C2's difference, t interval and gate on the depth images' rows only (same k as the digits' here, so a
    mix-up of the two data sources would show in both claims)."""
    found = decided(with_depth_images(dd_svm, noisy), shapes_k=10)
    c6 = found["C6"]
    assert c6.ours == pytest.approx(dd_svm - 8.0) and c6.threshold == found["C2"].threshold == 0.0
    assert c6.verdict.word == word and "t-interval" in c6.verdict.interval.method
    assert "generated depth images" in c6.statement and c6.details["comparison"]["seeds"] == SEEDS
    assert found["C2"].ours == pytest.approx(4.0 - 8.0) and found["C2"].verdict.word == "pass"


def test_c6_undecided_without_its_sweep_one_seed_or_at_smoke():
    alone = decided(rows())["C6"]
    assert alone.verdict.word == "undecided" and "no sweep of the generated depth images" in alone.verdict.reason
    assert alone.ours is None and alone.threshold == 0.0
    lonely = decided(with_depth_images(6.0, 0.3, seeds=1), shapes_k=10)["C6"]
    assert lonely.verdict.word == "undecided" and "interval needs 2" in lonely.verdict.reason
    smoke = decided(with_depth_images(6.0, 0.3), deciding=False, shapes_k=10)["C6"]
    assert smoke.verdict.word == "undecided" and smoke.ours == pytest.approx(-2.0)


def test_the_depth_images_need_their_own_sweep_and_test_images():
    from pydantic import ValidationError

    from flows.ddsvm.params import Params

    digits = {"k": 10, "seeds": 2, "methods": BOTH}
    shapes = {"data": "shapes", "k": 10, "seeds": 2, "methods": BOTH, "epochs": 3}
    found = Params(**PARAMS, sweeps=[digits, shapes], shapes_k=10)
    assert [s.tag() for s in found.sweeps] == ["k10", "shapes_k10"] and found.sweeps[1].epochs == 3
    with pytest.raises(ValidationError, match="shapes_k: needs a shapes sweep with k = 20"):
        Params(**PARAMS, sweeps=[digits, shapes], shapes_k=20)
    with pytest.raises(ValidationError, match="gate_k: needs a digits sweep with k = 10"):
        Params(**PARAMS, sweeps=[shapes])
    with pytest.raises(ValidationError, match="one sweep per data source and k"):
        Params(**PARAMS, sweeps=[digits, shapes, shapes])
    with pytest.raises(ValidationError, match=r"k = \[10\] on shapes leaves no test image"):
        Params(**PARAMS, sweeps=[digits, shapes], shapes_per_class=10)
