"""NCRS and dueling NGD (spec ncrs §10): noiseless monotonicity, the coin-flip control, budget accounting, the
d-invariance of Gaussian directions; the library baselines."""
from __future__ import annotations

import numpy as np

from tasks.comparison.objectives import ActiveSubspace, orthonormal_columns
from tasks.comparison.oracles import ComparisonOracle, Noise, ValueOracle
from tasks.comparison.random_search import dueling_ngd, ncrs
from tasks.comparison.ranking import cma_es_ranked, comparison_ranks, one_plus_one
from tasks.comparison.trace import Tracker


def _problem(d=20, k=2, chains=10, seed=0):
    rng = np.random.default_rng(seed)
    A = np.stack([orthonormal_columns(d, k, rng) for _ in range(chains)])
    x0 = np.einsum("cdk,ck->cd", A, 3 * rng.standard_normal((chains, k))) + rng.standard_normal((chains, d))
    return ActiveSubspace(A), x0


def test_exact_comparisons_never_increase_f():
    f, x0 = _problem()
    values = []
    ncrs(ComparisonOracle(f, Noise(), np.random.default_rng(1)), x0, 0.05, 500, np.random.default_rng(2),
         record=lambda x, q, info: values.append(f(x)))
    assert np.all(np.diff(np.array(values), axis=0) <= 0)


def test_coin_flip_comparisons_make_no_progress():
    f, x0 = _problem()
    result = ncrs(ComparisonOracle(f, Noise("margin", p=0.0), np.random.default_rng(1)), x0, 0.05, 3000,
                  np.random.default_rng(2))
    assert np.median(f.grad_norm(result.x)) >= 0.8 * np.median(f.grad_norm(x0))


def test_voting_uses_exactly_m_comparisons_per_iteration_and_stops_at_the_budget():
    f, x0 = _problem(chains=3)
    oracle = ComparisonOracle(f, Noise("sqrt_gap"), np.random.default_rng(1))
    result = ncrs(oracle, x0, 0.05, 100, np.random.default_rng(2), votes=9)
    assert result.iterations == 11 and result.queries == 99 and oracle.queries == 99 * 3
    oracle = ComparisonOracle(f, Noise("margin", p=0.4), np.random.default_rng(1))
    result = ncrs(oracle, x0, 0.05, 101, np.random.default_rng(2), two_sided=True, votes=1)
    assert result.queries == 100 and oracle.queries == 300


def test_f_trajectories_do_not_depend_on_the_ambient_dimension():
    """s = A r + (I - A A^T) q, r from the method's stream and q from a stream of its own: A^T s = r at any d, so the
    f-values coincide at d = 10 and 100."""
    k = 2
    z0 = np.array([[2.0, -1.5]])
    runs = []
    for d in (10, 100):
        A = orthonormal_columns(d, k, np.random.default_rng(d))
        f = ActiveSubspace(A)

        other = np.random.default_rng(7)

        def sample(rng, shape, A=A, other=other):
            r, q = rng.standard_normal((shape[0], k)), other.standard_normal(shape)
            return r @ A.T + q - (q @ A) @ A.T

        values = []
        ncrs(ComparisonOracle(f, Noise("margin", p=0.3), np.random.default_rng(0)), z0 @ A.T, 0.1, 400,
             np.random.default_rng(1), sample=sample, record=lambda x, q, info: values.append(f(x)[0]))
        runs.append(np.array(values))
    assert np.allclose(runs[0], runs[1], atol=1e-10)


def test_dueling_ngd_descends_and_projects_when_asked():
    f, x0 = _problem(chains=4)
    result = dueling_ngd(ComparisonOracle(f, Noise(), np.random.default_rng(1)), x0, 0.05, 1e-3, 2000,
                         np.random.default_rng(2))
    assert np.all(f(result.x) < f(x0)) and result.queries == 2000
    unit = lambda y: y / np.linalg.norm(y, axis=-1, keepdims=True)
    result = dueling_ngd(ComparisonOracle(f, Noise(), np.random.default_rng(1)), unit(x0), 0.05, 1e-3, 50,
                         np.random.default_rng(2), project=unit)
    assert np.allclose(np.linalg.norm(result.x, axis=1), 1)


def test_comparison_ranks_sort_and_the_library_baselines_run_within_budget():
    oracle = ComparisonOracle(lambda v: np.sum(v**2, axis=-1), Noise(), np.random.default_rng(0))
    points = [np.array([3.0]), np.array([1.0]), np.array([2.0])]
    assert comparison_ranks(oracle, points).tolist() == [2, 0, 1]
    f, x0 = _problem(d=10, chains=1)
    g = ActiveSubspace(f.A[0])
    tracker = Tracker({"grad": g.grad_norm})
    oracle = ComparisonOracle(g, Noise("margin", p=0.4), np.random.default_rng(1))
    result = cma_es_ranked(oracle, x0[0], 0.5, 1500, seed=3, record=tracker)
    assert result.queries <= 1500 and oracle.queries == result.queries
    values = ValueOracle(g)
    result = one_plus_one(values, x0[0], 500, seed=4)
    assert values.evaluations == 500 and g(result.x) < g(x0[0])
