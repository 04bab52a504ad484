"""The comparison oracle's noise models (spec §10 calibration), query counting, and monotone invariance."""
from __future__ import annotations

import numpy as np
import pytest

from tasks.comparison.oracles import ComparisonOracle, Noise, ValueOracle

N = 100_000


def _correct_fraction(noise: Noise, gaps: np.ndarray) -> np.ndarray:
    """Per pair, whether the oracle answered correctly, for f(x) = 0 against f(y) = -gap (y better: answer +1)."""
    oracle = ComparisonOracle(lambda v: v, noise, np.random.default_rng(0))
    return oracle.worse(np.zeros_like(gaps), -gaps) == 1


def test_uniform_margin_is_correct_with_probability_half_plus_p_whatever_the_gap():
    for p in (0.1, 0.4):
        for gap in (1e-6, 1.0, 1e3):
            fraction = _correct_fraction(Noise("margin", p=p), np.full(N, gap)).mean()
            assert abs(fraction - (0.5 + p)) < 4 * np.sqrt(0.25 / N)


def test_bradley_terry_and_sqrt_gap_match_their_link_in_gap_bins():
    gaps = np.random.default_rng(1).uniform(0, 0.3, N)
    for noise, link in ((Noise("bradley_terry", tau=0.05), lambda g: 1 / (1 + np.exp(-g / 0.05))),
                        (Noise("sqrt_gap", p_max=0.4, kappa=1.0), lambda g: 0.5 + np.minimum(0.4, np.sqrt(g)))):
        correct = _correct_fraction(noise, gaps)
        edges = np.linspace(0, 0.3, 7)
        for low, high in zip(edges[:-1], edges[1:]):
            inside = (gaps >= low) & (gaps < high)
            expected = link(gaps[inside]).mean()
            se = np.sqrt(expected * (1 - expected) / inside.sum())
            assert abs(correct[inside].mean() - expected) < 4 * se + 1e-3


def test_exact_oracle_and_ties_and_reverse():
    oracle = ComparisonOracle(lambda v: v, Noise(), np.random.default_rng(0))
    assert oracle.worse(np.array([2.0, 1.0]), np.array([1.0, 2.0])).tolist() == [1, -1]
    ties = oracle.worse(np.zeros(N), np.zeros(N))
    assert abs(ties.mean()) < 4 / np.sqrt(N)  # a tie is a fair coin
    reversed_oracle = ComparisonOracle(lambda v: v, Noise(), np.random.default_rng(0), reverse=True)
    assert reversed_oracle.worse(np.array(2.0), np.array(1.0)) == -1


def test_queries_count_every_pair_and_repeat():
    oracle = ComparisonOracle(lambda v: v.sum(-1), Noise("margin", p=0.3), np.random.default_rng(0))
    answers = oracle.worse(np.zeros((4, 3)), np.ones((4, 3)), repeats=9)
    assert answers.shape == (9, 4) and oracle.queries == 36
    values = ValueOracle(lambda v: v.sum(-1))
    values(np.zeros((5, 2)))
    assert values.evaluations == 5


def test_margin_answers_are_invariant_to_a_monotone_transform_and_gap_answers_are_not():
    x, y = np.random.default_rng(2).standard_normal((2, 1000, 3))
    f = lambda v: np.sum(v**2, axis=-1) * 0.01
    for noise, invariant in ((Noise("margin", p=0.2), True), (Noise("sqrt_gap"), False), (Noise("bradley_terry"), False)):
        a = ComparisonOracle(f, noise, np.random.default_rng(3)).worse(x, y)
        b = ComparisonOracle(lambda v: 3 * np.exp(f(v)) + 7, noise, np.random.default_rng(3)).worse(x, y)
        assert np.array_equal(a, b) == invariant


def test_an_unknown_noise_kind_is_refused():
    with pytest.raises(ValueError, match="noise kind"):
        Noise("gumbel").p_correct(np.ones(2))
