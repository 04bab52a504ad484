"""prox_last_iterate's claims and fitted slopes decide from the numbers they are given."""
from __future__ import annotations

import numpy as np
import pytest

from flows.prox_last_iterate.claims import claim_c1, claim_c2, claim_c3
from flows.prox_last_iterate.params import Params
from flows.prox_last_iterate.rates import seed_slopes, slope_interval
from tasks.core.params import load_paper_params
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def params() -> Params:
    return load_paper_params(ROOT, "prox_last_iterate", "default", Params)


def rows(params: Params, last: dict, average: float = 10.0, wins: int = 5) -> list[dict]:
    out = []
    for p in ("netlasso", "lasso_diabetes"):
        runs = getattr(params, p)
        for c in runs.cs:
            for T in runs.horizons:
                out.append({"problem": p, "c": c, "T": T, "last_gap_mean": last(p, c, T), "average_gap_mean": average,
                            "last_beats_average_seeds": wins})
    return out


def test_c1_ratio_over_the_rate_pair(params):
    data = rows(params, lambda p, c, T: 100.0 / np.sqrt(T))  # a 1/sqrt(T) rate: ratio 1/4 from 4000 to 64000
    claim = claim_c1(data, params, True)
    assert claim.ours == pytest.approx(0.25) and claim.passed is True
    slow = rows(params, lambda p, c, T: 100.0 / T ** 0.2)
    assert claim_c1(slow, params, True).passed is False


def test_c2_needs_the_mean_and_four_of_five_seeds(params):
    assert claim_c2(rows(params, lambda p, c, T: 1.0), params, True).passed is True
    assert claim_c2(rows(params, lambda p, c, T: 1.0, wins=3), params, True).passed is False
    worse = rows(params, lambda p, c, T: 11.0 if p == "netlasso" else 1.0)
    claim = claim_c2(worse, params, True)
    assert claim.ours == pytest.approx(1.1) and claim.passed is False


def test_slopes_recover_a_power_law_with_an_interval():
    horizons = [1000, 4000, 16000, 64000]
    rng = np.random.default_rng(0)
    gaps = np.array([[3.0 * T ** -0.5 * np.exp(0.01 * rng.standard_normal()) for T in horizons] for _ in range(5)])
    slopes = seed_slopes(horizons, gaps)
    assert np.allclose(slopes, -0.5, atol=0.02)
    fit = slope_interval(slopes)
    assert fit["low"] < fit["slope"] < fit["high"] and abs(fit["slope"] + 0.5) < 0.01 and fit["seeds"] == 5
    assert slope_interval(slopes[:1])["high"] is None
    fits = {"netlasso": {0.3: {"last": fit, "average": fit}}}
    assert claim_c3(fits, True).passed is True  # -0.5 with a narrow interval: the upper end is below -0.4
    flat = slope_interval(seed_slopes(horizons, gaps ** 0.5))  # slope -0.25
    assert claim_c3({"netlasso": {0.3: {"last": flat, "average": flat}}}, True).passed is False
    assert claim_c3({"netlasso": {0.3: {"last": slope_interval(slopes[:1]), "average": fit}}}, True).passed is None
