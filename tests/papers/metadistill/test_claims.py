"""metadistill's C1 and C2 decide on a bootstrap of the seeds within each BBOB function, C3 on a paired bootstrap of
the control seeds: a sample that clears the gate passes, one wholly outside fails, one at the gate is inconclusive,
and smoke is undecided; further dims give report rows; runs of different lengths each end at their own last
generation."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from flows.metadistill.claims import claim_c3, claims, ssft_rank_gain
from flows.metadistill.summaries import control_returns, final_rows, per_function, seed_precisions
from flows.metadistill.variants import variants

FUNCTIONS, SEEDS, DIM = 24, 5, 10
NAMES = variants([0, 1])
TIGHT = np.array([0.98, 0.99, 1.0, 1.01, 1.02])
NOISY = np.array([0.2, 0.6, 1.0, 1.4, 1.8])  # mean 1: a tie with a flat baseline, either way in a resample


RETURNS = {name: np.linspace(-100, -80, 10) for name in NAMES}  # control: every variant alike (C3 passes)


def table(precision, dims=(DIM,)) -> pd.DataFrame:
    """The solve stage's table, one generation: precision(fid, variant) -> the five seeds' final precisions."""
    return pd.DataFrame([{"variant": name, "fid": fid, "dim": dim, "seed": k, "instance": k + 1, "generation": 0,
                          "evaluations": 100, "best_generation": float(value), "best_so_far": float(value),
                          "f_opt": 0.0, "wall_time_s": 0.0}
                         for dim in dims for fid in range(1, FUNCTIONS + 1) for name in NAMES
                         for k, value in enumerate(precision(fid, name))])


def decided(precision, deciding: bool = True, names: list[str] = NAMES, returns=None, dims=(DIM,)):
    runs = table(precision, dims)
    runs = runs[runs.variant.isin(names)]
    return claims(per_function(runs, names), seed_precisions(runs, names), list(dims), DIM, names, 0, deciding,
                  RETURNS if returns is None else returns)


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
    assert (c1.verdict.word, c2.verdict.word, c3.verdict.word) == ("undecided",) * 3 and c1.ours == 20
    without_ssft = decided(c1_suite(20), names=["baseline", "md_j0", "cmaes", "cmaes_default"])[1]
    assert without_ssft.verdict.word == "undecided" and "md_j1" in without_ssft.verdict.reason


def test_seed_precisions_pair_every_variants_seeds_in_seed_order():
    runs = table(lambda fid, name: TIGHT * fid * (2 if name == "md_j0" else 1)).sample(frac=1.0, random_state=0)
    found = seed_precisions(runs, NAMES)
    assert set(found) == {(DIM, fid) for fid in range(1, FUNCTIONS + 1)}
    assert found[(DIM, 3)]["md_j0"].tolist() == pytest.approx((6 * TIGHT).tolist())
    assert found[(DIM, 3)]["baseline"].tolist() == pytest.approx((3 * TIGHT).tolist())


def control(md_shift, noise=0.0):
    """Ten seeds' best returns: the baseline's, md_j0's shifted by `md_shift` plus seed noise of `noise`."""
    base = np.linspace(-120, -80, 10)
    wiggle = noise * np.array([1, -1] * 5)
    return {"baseline": base, "md_j0": base + md_shift + wiggle, "md_j1": base, "cmaes": base - 10,
            "cmaes_default": base - 20}


def test_c3_decides_on_the_paired_mean_gap_of_best_returns():
    clear, behind, at_gate = (claim_c3(control(*args), 0, True) for args in ((2.0,), (-12.0,), (-5.0, 20.0)))
    assert clear.verdict.word == "pass" and clear.ours == pytest.approx(2.0) and clear.threshold == -5
    assert clear.verdict.interval.low >= -5 and "seeds" in clear.verdict.interval.method
    assert behind.verdict.word == "fail" and behind.verdict.interval.high < -5
    assert at_gate.verdict.word == "inconclusive" and at_gate.verdict.interval.low < -5 < at_gate.verdict.interval.high
    assert clear.details["mean_best_return"]["cmaes_default"] == pytest.approx(-120.0)
    assert clear.details["per_seed"]["md_j0"][0] == pytest.approx(-118.0)


@pytest.mark.heavy  # three bootstraps over 24 functions
def test_further_dims_are_report_rows_beside_the_decided_claims():
    found = decided(c1_suite(20), dims=(DIM, 20, 30))
    assert [c.id for c in found] == ["C1", "C2", "C3", "R1", "R2"]
    r1 = found[3]
    assert r1.verdict.word == "report" and r1.ours == 20 and r1.threshold is None and "d = 20" in r1.statement
    assert r1.details["intervals"]["wins"]["low"] >= 14 and r1.details["teacher_cmaes_default"]["functions"] == 24
    assert found[0].details["functions"] == 24  # C1 stays at the first dim


def test_each_run_ends_at_its_own_last_generation():
    rows = [{"variant": v, "dim": 10, "fid": 1, "seed": 0, "generation": g, "best_generation": 10.0 - g,
             "best_so_far": 10.0 - g, "f_opt": 0.0} for v, last in (("cmaes", 3), ("cmaes_default", 9))
            for g in range(last + 1)]
    final = final_rows(pd.DataFrame(rows)).set_index("variant")
    assert final.loc["cmaes", "precision"] == 7.0 and final.loc["cmaes_default", "precision"] == 1.0
    returns = pd.DataFrame([{"variant": v, "seed": k, "generation": g, "best_so_far_return": -100.0 + g + k}
                            for v in ("baseline", "md_j0") for k in (1, 0) for g in range(3 if v == "md_j0" else 5)])
    assert control_returns(returns, ["baseline", "md_j0"])["baseline"].tolist() == [-96.0, -95.0]
    assert control_returns(returns, ["baseline", "md_j0"])["md_j0"].tolist() == [-98.0, -97.0]
