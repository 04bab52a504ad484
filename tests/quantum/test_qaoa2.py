"""QAOA^2 divide and conquer (spec §3.2, §10 "QAOA^2 accounting"): const + final cut equals the
cut of the reconstructed bitstring exactly (integer weights), over policies and multi-level recursions;
the merge never beats the optimum; a graph with <= n_max nodes is solved exactly by an exact solver.
Subgraph solvers are stand-ins (brute force, or random bits) so these tests do not depend on qaoa.py,
except the one test that runs the real solver."""
from __future__ import annotations

import numpy as np
import pytest

from tasks.quantum.graph import WeightedGraph
from tasks.quantum.partition import POLICIES
from tasks.quantum.qaoa2 import QAOA2Result, baseline_policy, coarse_graph, qaoa_squared
from tests.quantum.test_partition import gnp, signed


def all_sides(n: int) -> np.ndarray:
    """(2^n, n) 0/1: every assignment."""
    return (np.arange(1 << n)[:, None] >> np.arange(n)) & 1


def brute_force(graph: WeightedGraph) -> tuple[float, np.ndarray]:
    sides = all_sides(graph.n)
    cuts = (sides[:, graph.edges[:, 0]] != sides[:, graph.edges[:, 1]]) @ graph.weights
    best = int(np.argmax(cuts))
    return float(cuts[best]), sides[best]


def exact_solver(graph, params, *, steps=20, lr=0.01, shots=1000, rng):
    cut, sides = brute_force(graph)
    return cut, sides, params


def random_solver(graph, params, *, steps=20, lr=0.01, shots=1000, rng):
    """Arbitrary bits: the accounting must hold whatever the part solutions are."""
    sides = rng.integers(0, 2, size=graph.n)
    return graph.cut(sides), sides, params


def sample_graphs() -> dict[str, WeightedGraph]:
    rng = np.random.default_rng(11)
    return {
        "g05_60": gnp(60, 0.5, rng),
        "w05_45_isolated": gnp(45, 0.5, rng, signed, isolated=4),
        "pm1s_50": gnp(50, 0.1, rng, lambda r, m: r.choice([-1.0, 1.0], size=m)),
        "pw05_33": gnp(33, 0.5, rng, lambda r, m: r.integers(1, 11, size=m)),
    }


@pytest.mark.parametrize("solver", [exact_solver, random_solver], ids=["exact", "random_bits"])
@pytest.mark.parametrize("policy", sorted(POLICIES))
@pytest.mark.parametrize("name", sorted(sample_graphs()))
def test_accounting_is_exact(name, policy, solver):
    graph = sample_graphs()[name]
    result = qaoa_squared(graph, baseline_policy(policy), n_max=6, rng=np.random.default_rng(1), solve_subgraph=solver)
    assert isinstance(result, QAOA2Result)
    assert result.sides.shape == (graph.n,) and set(np.unique(result.sides)) <= {0, 1}
    assert result.cut == graph.cut(result.sides)  # exact: integer weights
    assert result.levels == len(result.history) >= 2
    assert result.history[0]["n"] == graph.n and result.history[-1]["n"] <= 6 and result.history[-1]["k"] == 1
    assert [h["n"] for h in result.history[1:]] == [h["k"] for h in result.history[:-1]]
    assert len(result.level0_parts) == len(result.level0_params) == result.history[0]["k"]
    assert all(0 <= a < 2 * np.pi for theta in result.level0_params for a in theta)
    assert result.time_s >= 0


def test_random_policy_recurses_three_levels():
    graph = sample_graphs()["g05_60"]
    result = qaoa_squared(graph, baseline_policy("random"), n_max=6, rng=np.random.default_rng(0), solve_subgraph=random_solver)
    assert [(h["n"], h["k"]) for h in result.history] == [(60, 10), (10, 2), (2, 1)]
    assert result.levels == 3
    assert result.cut == graph.cut(result.sides)


def test_bipartite_graph_cut_is_valid_and_at_most_optimum():
    rng = np.random.default_rng(5)
    left, right = np.arange(12), np.arange(12, 30)
    pairs = np.array([(u, v) for u in left for v in right if rng.random() < 0.4])
    graph = WeightedGraph(30, pairs, rng.integers(1, 10, size=len(pairs)).astype(float))
    optimum = float(graph.weights.sum())  # cut every edge
    assert graph.cut(np.isin(np.arange(30), right).astype(int)) == optimum
    for policy in sorted(POLICIES):
        result = qaoa_squared(graph, baseline_policy(policy), n_max=5, rng=np.random.default_rng(2), solve_subgraph=exact_solver)
        assert result.cut == graph.cut(result.sides) <= optimum


def test_cut_at_most_brute_force_optimum():
    graph = gnp(16, 0.5, np.random.default_rng(9), signed)
    optimum, _ = brute_force(graph)
    for policy in sorted(POLICIES):
        result = qaoa_squared(graph, baseline_policy(policy), n_max=4, rng=np.random.default_rng(4), solve_subgraph=exact_solver)
        assert result.cut == graph.cut(result.sides) <= optimum


def test_small_graph_is_solved_exactly_in_one_level():
    graph = gnp(8, 0.6, np.random.default_rng(3), signed, isolated=1)
    optimum, _ = brute_force(graph)
    result = qaoa_squared(graph, baseline_policy("kl"), n_max=8, rng=np.random.default_rng(0), solve_subgraph=exact_solver)
    assert result.cut == optimum == graph.cut(result.sides)
    assert result.levels == 1 and len(result.level0_parts) == 1
    assert np.array_equal(result.level0_parts[0], np.arange(8))


def test_deterministic_for_a_seed():
    graph = sample_graphs()["w05_45_isolated"]
    runs = [qaoa_squared(graph, baseline_policy("boundary"), n_max=6, rng=np.random.default_rng(8),
                         solve_subgraph=random_solver) for _ in range(2)]
    assert runs[0].cut == runs[1].cut
    assert np.array_equal(runs[0].sides, runs[1].sides)
    assert runs[0].level0_params == runs[1].level0_params
    assert all(np.array_equal(a, b) for a, b in zip(runs[0].level0_parts, runs[1].level0_parts))


def test_coarse_graph_by_hand():
    # parts {0,1} {2,3}, bits [0,1,0,0]: (0,2) w=2 and (0,3) w=4 uncut -> w- = 6; (1,2) w=3 cut -> w+ = 3
    graph = WeightedGraph(4, np.array([[0, 1], [0, 2], [0, 3], [1, 2]]), np.array([7.0, 2.0, 4.0, 3.0]))
    coarse, w_plus = coarse_graph(graph, np.array([0, 0, 1, 1]), np.array([0, 1, 0, 0]), 2)
    assert w_plus == 3.0
    assert coarse.n == 2 and coarse.edges.tolist() == [[0, 1]] and coarse.weights.tolist() == [3.0]
    # (0,2) uncut and (1,2) cut with equal weights: W_ab = 0 drops the edge
    graph = WeightedGraph(3, np.array([[0, 2], [1, 2]]), np.array([2.0, 2.0]))
    coarse, w_plus = coarse_graph(graph, np.array([0, 0, 1]), np.array([0, 1, 0]), 2)
    assert (coarse.n, coarse.edges.shape, w_plus) == (2, (0, 2), 2.0)


def test_flip_identity_on_every_super_assignment():
    """const + coarse.cut(x) == graph.cut(bits ^ x[label]) for every super-node assignment x."""
    rng = np.random.default_rng(6)
    graph = gnp(12, 0.6, rng, signed)
    label = np.repeat(np.arange(4), 3)
    bits = rng.integers(0, 2, size=12)
    coarse, w_plus = coarse_graph(graph, label, bits, 4)
    inner = sum(graph.subgraph(np.flatnonzero(label == a)).cut(bits[label == a]) for a in range(4))
    for x in all_sides(4):
        assert inner + w_plus + coarse.cut(x) == graph.cut(bits ^ x[label])


def test_policy_output_is_checked():
    graph = sample_graphs()["pw05_33"]

    def overlapping(g, n_max, rng, level):
        parts = [np.arange(0, 6), np.arange(5, g.n)]
        return parts, [(0.0, 0.0)] * 2

    def singletons(g, n_max, rng, level):
        return [np.array([i]) for i in range(g.n)], [(0.0, 0.0)] * g.n

    with pytest.raises(ValueError, match="level 0"):
        qaoa_squared(graph, overlapping, n_max=6, rng=np.random.default_rng(0), solve_subgraph=exact_solver)
    with pytest.raises(ValueError, match="progress"):
        qaoa_squared(graph, singletons, n_max=6, rng=np.random.default_rng(0), solve_subgraph=exact_solver)
    with pytest.raises(ValueError, match="n_max"):
        qaoa_squared(graph, baseline_policy("random"), n_max=1, rng=np.random.default_rng(0), solve_subgraph=exact_solver)
    with pytest.raises(ValueError, match="baseline policy"):
        baseline_policy("spectral")


def test_with_the_real_qaoa_solver():
    pytest.importorskip("tasks.quantum.qaoa")
    graph = sample_graphs()["w05_45_isolated"]
    for policy in ("random", "kl"):
        result = qaoa_squared(graph, baseline_policy(policy), n_max=6, rng=np.random.default_rng(0), shots=200)
        assert result.cut == graph.cut(result.sides)
        assert result.levels >= 3
    small = gnp(6, 0.7, np.random.default_rng(1), signed)
    result = qaoa_squared(small, baseline_policy("random"), n_max=6, rng=np.random.default_rng(0), shots=1000)
    assert result.cut == brute_force(small)[0]  # 1000 shots over 64 states find the optimum
