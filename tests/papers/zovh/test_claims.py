"""zovh's claim checks decide on paired bootstrap intervals over seeds against fixed thresholds, only where the
profile decides: synthetic per-seed samples that clear, miss and straddle each gate."""
from __future__ import annotations

import math

import numpy as np
import pytest

from flows.zovh.claims import claim_c1, claim_c2, claim_c5, claim_descent, mean_errors, seed_errors
from flows.zovh.experiments import best_lr

FUNCTIONS = ["quadratic", "rosenbrock", "styblinski_tang"]
LRS = [1e-4, 1e-3]


def offsets(n: int, seed: int) -> np.ndarray:
    """n evenly spaced offsets in [-1.5, 1.5] in an order given by `seed`: a sample built on them has a known mean
    and median, so a straddling sample sits on its gate by construction."""
    return np.random.default_rng(seed).permutation(np.linspace(-1.5, 1.5, n))


def spread(center: float, sigma: float, seed: int, n: int = 10) -> np.ndarray:
    """n per-seed values of mean and median `center`, spread by +-1.5 sigma * center."""
    return center * (1 + sigma * offsets(n, seed))


def errors(zovh: float, reuse: float, baselines=(10.0, 4.0, 8.0), sigma=0.02) -> dict:
    """seed_errors' shape: (function, "near", estimator, 3) -> mean error per seed (10 seeds)."""
    table = {}
    for i, fn in enumerate(FUNCTIONS):
        values = {"zovh": zovh, "zovh_reuse": reuse} | dict(zip(("s1", "s2", "scd"), baselines))
        table |= {(fn, "near", name, 3): spread(v, sigma, seed=10 * i + j) for j, (name, v) in enumerate(values.items())}
    return table


@pytest.mark.parametrize(("zovh", "sigma", "word"), [(1.6, 0.02, "pass"), (2.4, 0.02, "fail"), (1.8, 0.6, "inconclusive")])
def test_c1_against_the_best_of_s1_s2_scd(zovh, sigma, word):
    claim = claim_c1(errors(zovh, 1.0, sigma=sigma), FUNCTIONS, 3, deciding=True)
    assert claim.ours == pytest.approx(zovh / 4.0) and claim.verdict.word == word
    assert claim.details["errors"]["quadratic"]["best_baseline"] == "s2"
    assert len(claim.details["errors_per_seed"]["rosenbrock"]["s2"]) == 10
    assert "paired bootstrap over 10 seeds" in claim.verdict.interval.method
    assert claim_c1(errors(zovh, 1.0), FUNCTIONS, 3, deciding=False).verdict.word == "undecided"


@pytest.mark.parametrize(("reuse", "sigma", "word"), [(1.0, 0.02, "pass"), (1.7, 0.02, "fail"), (1.5, 0.6, "inconclusive")])
def test_c2_takes_the_worst_function(reuse, sigma, word):
    table = errors(2.0, 1.0, sigma=sigma) | {("rosenbrock", "near", "zovh_reuse", 3): spread(reuse, sigma, seed=99)}
    claim = claim_c2(table, FUNCTIONS, 3, deciding=True)
    assert claim.ours == pytest.approx(reuse / 2.0) and claim.verdict.word == word
    assert claim_c2(table, FUNCTIONS, 3, deciding=False).verdict.word == "undecided"


def descent(reuse: float, sgd: float, zoar: float, sigma=0.02, walls=(2e-3, 1e-3), seeds=6) -> dict:
    """descent_summary's shape: every method's per-seed final ratios over LRS, best at lr 1e-3 (10 x worse at 1e-4)."""
    def row(ratio, wall, seed):
        at_best = spread(ratio, sigma, seed, seeds)
        return {"best_lr": 1e-3, "best_median_ratio": ratio, "paper_lr_median_ratio": ratio,
                "final_ratio_by_seed": np.column_stack([10 * at_best, at_best]),
                "wall_per_iteration_s": wall, "run_wall_per_iteration_by_seed": spread(wall, sigma, seed + 50, seeds)}
    return {fn: {"zovh_reuse": row(reuse, walls[0], 10 * i), "zo_sgd": row(sgd, walls[1], 10 * i + 1),
                 "zoar": row(zoar, walls[1], 10 * i + 2), "zovh": row(reuse, walls[0], 10 * i + 3)}
            for i, fn in enumerate(("quadratic", "levy", "ackley"))}


@pytest.mark.parametrize(("sgd", "zoar", "sigma", "words"), [
    (0.5, 0.095, 0.02, ("pass", "pass")),
    (0.15, 0.05, 0.02, ("fail", "fail")),
    (0.2, 0.0909, 0.5, ("inconclusive", "inconclusive")),  # 0.1 / 0.2 = 0.5 and 0.1 / 0.0909 = 1.1: on the gates
])
def test_descent_claims(sgd, zoar, sigma, words):
    summary = descent(0.1, sgd, zoar, sigma=sigma)
    c3, c4 = (claim_descent(cid, summary, LRS, base, factor, True)
              for cid, base, factor in (("C3", "zo_sgd", 0.5), ("C4", "zoar", 1.1)))
    assert (c3.verdict.word, c4.verdict.word) == words
    assert c3.ours == pytest.approx(0.1 / sgd) and c4.ours == pytest.approx(0.1 / zoar)
    assert set(c3.details["ratios"]) == {"quadratic", "levy"}  # Ackley is reported, not gated
    assert len(c3.details["final_ratio_per_seed_at_best_lr"]["levy"]["zo_sgd"]) == 6
    only_quadratic = {"quadratic": summary["quadratic"]}
    assert claim_descent("C3", only_quadratic, LRS, "zo_sgd", 0.5, True).verdict.word == "undecided"
    assert claim_descent("C3", summary, LRS, "zo_sgd", 0.5, False).verdict.word == "undecided"


def test_a_method_diverging_at_every_lr_fails_against_one_that_converges():
    summary = descent(0.1, 0.5, 0.095)
    summary["levy"]["zovh_reuse"]["final_ratio_by_seed"] = np.full((6, 2), np.inf)
    c3 = claim_descent("C3", summary, LRS, "zo_sgd", 0.5, True)
    assert c3.ours is None and c3.verdict.word == "fail"


@pytest.mark.parametrize(("wall", "sigma", "word"), [(2e-3, 0.02, "pass"), (4e-3, 0.02, "fail"), (3e-3, 0.5, "inconclusive")])
def test_c5_on_the_runs_own_timings(wall, sigma, word):
    c5 = claim_c5(descent(0.1, 0.5, 0.095, sigma=sigma, walls=(wall, 1e-3)), True)
    assert c5.ours == pytest.approx(wall / 1e-3) and c5.verdict.word == word
    assert c5.details["controlled_ratios"]["levy"] == pytest.approx(wall / 1e-3)
    assert claim_c5(descent(0.1, 0.5, 0.095), False).verdict.word == "undecided"


def test_best_lr_counts_divergence_as_infinite():
    ratios = np.array([[0.5, 0.1, math.nan], [0.4, 0.2, 0.0]])
    assert best_lr([1e-4, 1e-3, 1e-2], ratios) == (1e-3, pytest.approx(0.15))


def test_mean_and_per_seed_errors_group_rows():
    rows = [{"function": "quadratic", "regime": "near", "estimator": "zovh", "K": 3.0, "seed": float(s), "frob_err": e}
            for s, e in ((1, 1.0), (0, 3.0), (1, 3.0), (0, 5.0))]
    assert mean_errors(rows) == {("quadratic", "near", "zovh", 3): 3.0}
    assert seed_errors(rows)[("quadratic", "near", "zovh", 3)].tolist() == [4.0, 2.0]
