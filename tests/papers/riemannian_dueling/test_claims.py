"""The riemannian_dueling claim checks on hand-made summaries, and one instance's runs: determinism and the order
of the methods on E1."""
from __future__ import annotations

import numpy as np
import pytest

from flows.riemannian_dueling.claims import claims, loglog_slope
from flows.riemannian_dueling.experiments import rayleigh_runs, simplex_run
from flows.riemannian_dueling.params import Baselines
from flows.riemannian_dueling.summaries import rayleigh_seed
from tasks.comparison.objectives import rayleigh_matrix

BASELINES = Baselines(rzo_samples=5, rzo_mu=1e-4, rzo_eta_scale=1.0, rgd_iterations=20)


def offsets(n: int, seed: int) -> np.ndarray:
    """n evenly spaced offsets in [-1.5, 1.5] in an order given by `seed`: a sample built on them has a known
    median, so a straddling sample sits on its gate by construction."""
    return np.random.default_rng(seed).permutation(np.linspace(-1.5, 1.5, n))


def spread(median: float, sigma: float, seed: int, n: int = 8) -> list[float]:
    """n per-seed values around `median` (the same factor off it for every sample of n), spread by exp(1.5 sigma)."""
    return list(median * np.exp(sigma * offsets(n, seed)))


def _cell(gap, hit, **extra):
    return {"gap_at_claim": gap, "gap_at_budget": [g / 2 for g in gap], "hit": hit, "wall_time_s": [0.1] * len(gap)} | extra


def _inputs(gap50=None, control=None, B50=None, B100=None, karcher_gap=None, subopt80=None, sigma=0.05):
    """Per-seed summaries (8 seeds on E1, 2 on E2, 6 on E3) around the given medians; `sigma` spreads every sample."""
    def around(value, seed, n=8):
        return spread(value, sigma, seed, n) if np.isscalar(value) else list(value)
    B = {25: around(120.0, 1), 50: around(B50 or 250.0, 2), 100: around(B100 or 500.0, 3)}
    rayleigh = {n: {m: _cell(around(control or 0.9, 4) if m == "reversed" else around(gap50 or 0.01, 5), B[n])
                    for m in ("rdngd", "reversed", "euclidean_ngd", "rzo", "rgd")} for n in (25, 50, 100)}
    karcher = {5: {m: {"rel_gap": around(karcher_gap or 1e-4, 6, 2), "min_eig": [0.3] * 2,
                       "increase": [-1.0 if m != "reversed" else 2.0] * 2}
                   for m in ("rdngd", "reversed", "euclidean_ngd", "rzo", "rgd")}}
    horizons = [10, 20, 40, 80]
    ends = (0.02, 0.01, 0.004, subopt80 or 0.001)
    simplex = {"horizons": horizons, "subopt": {T: around(end, 10 + T, 6) for T, end in zip(horizons, ends)},
               "projections": 0, "max_sum_error": 2e-16, "min_x": 0.0, "comparisons": {}, "lmo_calls": 80}
    return rayleigh, karcher, simplex


def words(*inputs, deciding=True) -> list[str]:
    return [c.verdict.word for c in claims(*inputs, deciding=deciding)]


def test_clear_samples_pass_on_their_intervals():
    c1, c2, c3, c4, r5 = claims(*_inputs(), deciding=True)
    assert [c.verdict.word for c in (c1, c2, c3, c4, r5)] == ["pass"] * 4 + ["report"]
    assert c2.ours == pytest.approx(2.0) and c2.details["exponent"] == pytest.approx(loglog_slope([25, 50, 100], [120, 250, 500]))
    assert "bootstrap over 8 and 8 seeds" in c2.verdict.interval.method and len(c2.details["B_per_seed"]["100"]) == 8
    assert c1.verdict.interval.high <= 0.05 and "reversed control: the 95% interval" in c1.verdict.reason
    assert "bootstrap over 2 seeds" in c3.verdict.interval.method and "SPD: exact" in c3.verdict.reason
    assert "paired bootstrap over 6 seeds" in c4.verdict.interval.method and len(c4.details["subopt_per_seed"]["80"]) == 6
    assert r5.threshold is None


def test_clear_misses_fail():
    assert words(*_inputs(gap50=0.2, B100=1000.0, karcher_gap=1e-2, subopt80=0.02)) == ["fail"] * 4 + ["report"]
    assert words(*_inputs(control=0.3))[0] == "fail"  # the reversed control must stay far
    rayleigh, karcher, simplex = _inputs()
    karcher[5]["rdngd"]["min_eig"] = [0.3, -1e-3]
    assert words(rayleigh, karcher, simplex | {"projections": 1})[2:4] == ["fail", "fail"]  # the exact parts


def test_noisy_samples_on_their_gates_are_inconclusive():
    # medians on or near their gates (C2: B(100)/B(50) = 3.5), every sample spread by a factor 4.5 either way
    noisy = _inputs(gap50=0.05, B100=875.0, karcher_gap=5e-3, sigma=1.0)
    assert words(*noisy) == ["inconclusive"] * 4 + ["report"]
    rayleigh, karcher, simplex = noisy
    assert words(rayleigh, karcher, simplex | {"projections": 1})[3] == "fail"  # a failed part outweighs a straddle


def test_a_target_never_reached_fails():
    rayleigh, karcher, simplex = _inputs()
    rayleigh[100]["rdngd"]["hit"] = [np.inf] * 5 + [500.0] * 3  # B(100): over half the seeds miss the gap
    c2 = claims(rayleigh, karcher, simplex, deciding=True)[1]
    assert c2.verdict.word == "fail" and "target never reached: median B beyond the budget (80 n) at n = 100" in c2.verdict.reason
    assert c2.ours is None and c2.details["B_per_seed"]["100"][:5] == [None] * 5
    rayleigh[100]["rdngd"]["hit"] = [np.inf] * 2 + spread(500.0, 0.05, 3, 6)  # a few misses only widen the interval
    c2 = claims(rayleigh, karcher, simplex, deciding=True)[1]
    assert c2.verdict.word in ("pass", "inconclusive") and c2.verdict.interval.high == np.inf


def test_smoke_and_missing_sizes_are_not_decided():
    assert words(*_inputs(), deciding=False) == ["undecided"] * 4 + ["report"]
    rayleigh, karcher, simplex = _inputs()
    small = claims({25: rayleigh[25]}, {3: karcher[5]}, simplex | {"horizons": [10, 20]}, deciding=True)
    assert [c.verdict.word for c in small[:4]] == ["undecided"] * 4
    assert "the profile lacks n = 50" in small[0].verdict.reason


def test_same_seed_same_numbers_and_rdngd_against_its_baselines():
    rng = np.random.default_rng(0)
    A = rayleigh_matrix(12, rng)
    x0 = rng.standard_normal(12)
    x0 /= np.linalg.norm(x0)
    first, second = (rayleigh_runs(A, x0, 480, 0.3, 1e-4, BASELINES, seed=7) for _ in range(2))
    for method in first:
        assert np.array_equal(first[method]["f"], second[method]["f"])
    f_star = -0.5
    summary = rayleigh_seed(first, f_star, 12, 40, 0.05)
    assert summary["rdngd"]["gap_at_claim"] < 0.2 < summary["reversed"]["gap_at_claim"]
    assert summary["rgd"]["gap_at_claim"] < 1e-3  # the first-order reference
    run = simplex_run(np.arange(1, 9) / 36, np.eye(8)[0], 8, 1.0, np.sqrt(2), seed=1)
    assert run["projections"] == 0 and run["subopt"][-1] < run["subopt"][0] and len(run["subopt"]) == 9
