"""metadistill's C1 and C2 decide on a bootstrap of the seeds within each BBOB function: a suite that clears the gate
passes, one wholly outside fails, one with seed-noisy functions at the gate is inconclusive, and smoke is undecided."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from flows.metadistill.claims import claims, ssft_rank_gain
from flows.metadistill.summaries import per_function, seed_precisions
from flows.metadistill.variants import variants

FUNCTIONS, SEEDS, DIM = 24, 5, 10
NAMES = variants([0, 1])
TIGHT = np.array([0.98, 0.99, 1.0, 1.01, 1.02])
NOISY = np.array([0.2, 0.6, 1.0, 1.4, 1.8])  # mean 1: a tie with a flat baseline, either way in a resample


def table(precision) -> pd.DataFrame:
    """The solve stage's table, one generation: precision(fid, variant) -> the five seeds' final precisions."""
    return pd.DataFrame([{"variant": name, "fid": fid, "dim": DIM, "seed": k, "instance": k + 1, "generation": 0,
                          "evaluations": 100, "best_generation": float(value), "best_so_far": float(value),
                          "f_opt": 0.0, "wall_time_s": 0.0}
                         for fid in range(1, FUNCTIONS + 1) for name in NAMES
                         for k, value in enumerate(precision(fid, name))])


def decided(precision, deciding: bool = True, names: list[str] = NAMES):
    runs = table(precision)
    runs = runs[runs.variant.isin(names)]
    return claims(per_function(runs, names), seed_precisions(runs, names), DIM, names, 0, deciding)


def c1_suite(md_wins: int, noisy: int = 0):
    """md_j0 at a tenth of the baseline on `md_wins` functions, ten times it on the rest but for `noisy` functions
    where it ties the baseline's mean with a wide seed spread."""
    def precision(fid, name):
        if name != "md_j0":
            return TIGHT
        if fid <= md_wins:
            return 0.1 * TIGHT
        return NOISY if fid <= md_wins + noisy else 10 * TIGHT
    return precision


def test_c1_passes_when_md_wins_clearly_on_enough_functions():
    c1 = decided(c1_suite(20))[0]
    assert c1.verdict.word == "pass" and c1.ours == 20 and c1.threshold == 14
    assert c1.verdict.interval.low >= 14 and "seeds per function" in c1.verdict.interval.method
    assert c1.details["median_log10_ratio"] == pytest.approx(-1.0) and c1.verdict.reason.startswith("wins decides")
    assert c1.details["parts"]["median log10 ratio"]["verdict"] == "pass" and c1.details["parts"]["wins"]["low"] >= 14
    assert c1.details["per_seed"]["f1"]["baseline"] == TIGHT.tolist()


def test_c1_fails_when_md_wins_on_too_few_functions():
    c1 = decided(c1_suite(8))[0]
    assert c1.verdict.word == "fail" and c1.verdict.interval.high < 14


def test_c1_straddles_when_seed_noisy_functions_decide_the_count():
    c1 = decided(c1_suite(12, noisy=4))[0]  # 12 sure wins, 4 coin flips: 12 to 16 wins
    assert c1.verdict.word == "inconclusive" and c1.verdict.interval.low < 14 <= c1.verdict.interval.high


def c2_suite(md1):
    """baseline worst everywhere, md_j0 tight at 1, md_j1 as given."""
    return lambda fid, name: {"baseline": 10 * TIGHT, "md_j0": TIGHT, "cmaes": TIGHT}.get(name, md1)


def test_c2_decides_on_the_rank_gain_of_ssft():
    better, worse, tied = (decided(c2_suite(md1))[1] for md1 in (0.5 * TIGHT, 2 * TIGHT, NOISY))
    assert better.verdict.word == "pass" and better.ours == pytest.approx(-1.0) and better.threshold == 0.1
    assert worse.verdict.word == "fail" and worse.ours == pytest.approx(1.0) and worse.verdict.interval.low > 0.1
    assert tied.verdict.word == "inconclusive" and tied.verdict.interval.low < 0.1 < tied.verdict.interval.high
    assert tied.details["average_ranks"]["baseline"] == 3.0


def test_the_rank_gain_is_md_j1s_average_rank_less_md_j0s():
    samples = [np.array([[3.0, 1.0, 2.0]]), np.array([[3.0, 2.0, 1.0]]), np.array([[1.0, 3.0, 2.0]])]
    assert ssft_rank_gain(*samples) == pytest.approx((2 + 1 + 2) / 3 - (1 + 2 + 3) / 3)


def test_smoke_leaves_c1_and_c2_undecided_and_c2_needs_md_j1():
    c1, c2, c3 = decided(c1_suite(20), deciding=False)
    assert (c1.verdict.word, c2.verdict.word) == ("undecided", "undecided") and c1.ours == 20
    assert c3.verdict.word == "undecided" and "gymnasium" in c3.verdict.reason
    without_ssft = decided(c1_suite(20), names=["baseline", "md_j0", "cmaes"])[1]
    assert without_ssft.verdict.word == "undecided" and "md_j1" in without_ssft.verdict.reason


def test_seed_precisions_pair_every_variants_seeds_in_seed_order():
    runs = table(lambda fid, name: TIGHT * fid * (2 if name == "md_j0" else 1)).sample(frac=1.0, random_state=0)
    found = seed_precisions(runs, NAMES)
    assert set(found) == {(DIM, fid) for fid in range(1, FUNCTIONS + 1)}
    assert found[(DIM, 3)]["md_j0"].tolist() == pytest.approx((6 * TIGHT).tolist())
    assert found[(DIM, 3)]["baseline"].tolist() == pytest.approx((3 * TIGHT).tolist())
