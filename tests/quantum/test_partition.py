"""Baseline partition policies (spec §4, §10 "Partitions"): every policy returns a disjoint
cover of the nodes by non-empty parts of <= n_max nodes, random gives exactly ceil(n/n_max) parts, and
the split / merge / boundary / KL steps do what §4 says on hand-made graphs; the modularity policy
ignores weights (as the authors' code); the perturbed partitions of the critic data keep part sizes;
the intra-part |w| share by hand."""
from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from tasks.quantum.graph import WeightedGraph
from tasks.quantum.partition import (
    POLICIES,
    SAMPLING_POLICIES,
    intra_weight_share,
    merge_small,
    modularity_of,
    modularity_partition,
    reduce_boundary,
    split_large,
)


def gnp(n: int, p: float, rng: np.random.Generator, weights=lambda rng, m: np.ones(m), isolated: int = 0) -> WeightedGraph:
    """G(n, p) on the first n - isolated nodes; the last `isolated` nodes have no edges."""
    iu, ju = np.triu_indices(n - isolated, 1)
    keep = rng.random(len(iu)) < p
    edges = np.stack([iu[keep], ju[keep]], axis=1).reshape(-1, 2)
    return WeightedGraph(n, edges, weights(rng, len(edges)).astype(float))


def signed(rng, m):
    w = rng.integers(-10, 11, size=m)
    return np.where(w == 0, 1, w)


def graphs() -> dict[str, WeightedGraph]:
    rng = np.random.default_rng(7)
    return {
        "g05_37": gnp(37, 0.5, rng),
        "w05_40_isolated": gnp(40, 0.5, rng, signed, isolated=5),
        "pm1s_50": gnp(50, 0.1, rng, lambda r, m: r.choice([-1.0, 1.0], size=m)),
        "all_negative_23": gnp(23, 0.3, rng, lambda r, m: -r.integers(1, 5, size=m)),
        "zero_sum": WeightedGraph(12, np.array([[0, 1], [2, 3], [4, 5]]), np.array([1.0, -2.0, 1.0])),
        "no_edges_13": WeightedGraph(13, np.zeros((0, 2), dtype=int), np.zeros(0)),
        "small_5": gnp(5, 0.6, rng, signed),
    }


def assert_cover(parts: list[np.ndarray], n: int, n_max: int) -> None:
    assert all(len(p) >= 1 for p in parts)
    assert all(len(p) <= n_max for p in parts)
    flat = np.concatenate(parts)
    assert len(flat) == n
    assert np.array_equal(np.sort(flat), np.arange(n))


@pytest.mark.parametrize("policy", sorted(SAMPLING_POLICIES))
@pytest.mark.parametrize("name", sorted(graphs()))
@pytest.mark.parametrize("n_max", [3, 6, 10])
def test_policy_returns_disjoint_cover(policy, name, n_max):
    graph = graphs()[name]
    parts = SAMPLING_POLICIES[policy](graph, n_max, np.random.default_rng(0))
    assert_cover(parts, graph.n, n_max)
    if graph.n <= n_max:
        assert len(parts) == 1
    if policy == "random":
        assert len(parts) == -(-graph.n // n_max)
        sizes = [len(p) for p in parts]
        assert max(sizes) - min(sizes) <= 1


@pytest.mark.parametrize("policy", sorted(SAMPLING_POLICIES))
def test_policy_is_deterministic_for_a_seed(policy):
    graph = graphs()["w05_40_isolated"]
    a = SAMPLING_POLICIES[policy](graph, 6, np.random.default_rng(3))
    b = SAMPLING_POLICIES[policy](graph, 6, np.random.default_rng(3))
    assert len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_policy_rejects_bad_n_max(policy):
    with pytest.raises(ValueError, match="n_max"):
        POLICIES[policy](graphs()["g05_37"], 0, np.random.default_rng(0))


def test_split_large_chunks_only_oversized_parts():
    parts = split_large([np.arange(11), np.array([11, 12])], 4, np.random.default_rng(0))
    assert sorted(len(p) for p in parts) == [2, 3, 4, 4]
    assert_cover(parts, 13, 4)


def test_merge_small_takes_heaviest_pair_first_and_skips_weight_at_most_minus_one():
    # path 0 -(5)- 1 -(-2)- 2 -(3)- 3: with n_max = 2 the merges are {0,1} then {2,3}
    graph = WeightedGraph(4, np.array([[0, 1], [1, 2], [2, 3]]), np.array([5.0, -2.0, 3.0]))
    parts = merge_small(graph, [np.array([i]) for i in range(4)], 2, np.random.default_rng(0))
    assert sorted(map(tuple, parts)) == [(0, 1), (2, 3)]
    # with n_max = 4 the pair ({0,1}, {2,3}) connects with -2 <= -1 and stays apart
    parts = merge_small(graph, [np.array([i]) for i in range(4)], 4, np.random.default_rng(0))
    assert sorted(map(tuple, parts)) == [(0, 1), (2, 3)]
    # weight exactly 0 (no edges) qualifies: two isolated nodes merge
    empty = WeightedGraph(2, np.zeros((0, 2), dtype=int), np.zeros(0))
    assert [tuple(p) for p in merge_small(empty, [np.array([0]), np.array([1])], 2, np.random.default_rng(0))] == [(0, 1)]


def test_reduce_boundary_moves_a_stray_node_when_capacity_allows():
    # path 0-1-2-3-4-5 labelled [0,0,0,1,1,0]: boundary {2,3,4,5}; moving 5 into part 1 leaves {2,3}
    graph = WeightedGraph(6, np.array([[i, i + 1] for i in range(5)]), np.ones(5))
    label = reduce_boundary(graph, np.array([0, 0, 0, 1, 1, 0]), 3, np.random.default_rng(0))
    assert list(label) == [0, 0, 0, 1, 1, 1]
    # part 1 full (capacity 2): node 5 stays
    label = reduce_boundary(graph, np.array([0, 0, 0, 1, 1, 0]), 2, np.random.default_rng(0))
    assert list(label) == [0, 0, 0, 1, 1, 0]


def test_kl_and_modularity_separate_two_cliques():
    clique = [(i, j) for i in range(5) for j in range(i + 1, 5)]
    edges = np.array(clique + [(i + 5, j + 5) for i, j in clique] + [(4, 5)])
    graph = WeightedGraph(10, edges, np.ones(len(edges)))
    for policy in ("kl", "modularity", "boundary"):
        parts = POLICIES[policy](graph, 5, np.random.default_rng(0))
        assert sorted(map(tuple, parts)) == [(0, 1, 2, 3, 4), (5, 6, 7, 8, 9)], policy


def test_modularity_of_is_the_unweighted_modularity_and_nan_without_edges():
    graph = graphs()["w05_40_isolated"]
    parts = POLICIES["random"](graph, 8, np.random.default_rng(0))
    g = nx.Graph()
    g.add_nodes_from(range(graph.n))
    g.add_edges_from(map(tuple, graph.edges.tolist()))
    assert modularity_of(graph, parts) == pytest.approx(nx.community.modularity(g, [set(p) for p in parts]))
    assert np.isfinite(modularity_of(graphs()["zero_sum"], [np.arange(12)]))  # signed weights summing to 0 are fine
    assert np.isnan(modularity_of(graphs()["no_edges_13"], [np.arange(13)]))


def test_modularity_policy_ignores_weights():
    """Reweighting the edges (signs included) changes nothing before merge_small: with every part already at
    capacity, nothing is merged, so the communities of the unweighted graph come back as they are."""
    clique = [(i, j) for i in range(4) for j in range(i + 1, 4)]
    edges = np.array(clique + [(i + 4, j + 4) for i, j in clique] + [(3, 4)])
    rng = np.random.default_rng(0)
    plain = WeightedGraph(8, edges, np.ones(len(edges)))
    weighted = WeightedGraph(8, edges, rng.choice([-5.0, 1.0, 7.0], size=len(edges)))
    expected = [(0, 1, 2, 3), (4, 5, 6, 7)]
    for graph in (plain, weighted):
        assert sorted(map(tuple, modularity_partition(graph, 4, np.random.default_rng(1)))) == expected


@pytest.mark.parametrize("base", ["kl", "boundary"])
def test_perturbed_partitions_keep_sizes_and_differ(base):
    graph = graphs()["g05_37"]
    original = SAMPLING_POLICIES[base](graph, 6, np.random.default_rng(4))
    changed = SAMPLING_POLICIES[f"{base}_perturbed"](graph, 6, np.random.default_rng(4))  # same draws, then swaps
    assert sorted(map(len, changed)) == sorted(map(len, original))
    assert sorted(map(tuple, changed)) != sorted(map(tuple, original))


def test_intra_weight_share_by_hand():
    graph = WeightedGraph(4, np.array([[0, 1], [1, 2], [2, 3], [0, 3]]), np.array([2.0, -1.0, 3.0, -4.0]))
    assert intra_weight_share(graph, [np.array([0, 1]), np.array([2, 3])]) == pytest.approx(5 / 10)
    assert intra_weight_share(graph, [np.array([0, 3]), np.array([1, 2])]) == pytest.approx(5 / 10)
    assert intra_weight_share(graph, [np.arange(4)]) == 1.0
