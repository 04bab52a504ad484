"""Instances and reference OPT (spec §6, §10): family properties and determinism,
Biq Mac round trip, readers' error messages with line numbers, brute force vs enumeration and
vs local search, ρ at the optimum."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from tasks.core.inputs import InputError
from tasks.quantum import instances
from tasks.quantum.graph import WeightedGraph, performance_ratio
from tasks.quantum.instances import (
    FAMILIES,
    MAX_ABS_WEIGHT,
    MAX_NODES,
    MAX_QUBO_VARIABLES,
    GraphFormatError,
    bqp,
    bqp_matrix,
    brute_force_maxcut,
    g05,
    local_search_maxcut,
    pm1s,
    pw05,
    read_biqmac,
    read_edge_list,
    read_qubo,
    t2g,
    w05,
    write_graph,
)


def well_formed(graph: WeightedGraph) -> None:
    assert graph.edges.shape == (len(graph.weights), 2)
    assert np.all(graph.edges[:, 0] < graph.edges[:, 1])
    assert np.all((graph.edges >= 0) & (graph.edges < graph.n))
    assert len({tuple(e) for e in graph.edges.tolist()}) == len(graph.edges)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_families_deterministic_and_well_formed(name):
    size = 5 if name == "t2g" else 30
    a, b = FAMILIES[name](size, np.random.default_rng(4)), FAMILIES[name](size, 4)
    assert a.n == b.n and np.array_equal(a.edges, b.edges) and np.array_equal(a.weights, b.weights)
    c = FAMILIES[name](size, np.random.default_rng(5))
    assert not (np.array_equal(a.edges, c.edges) and np.array_equal(a.weights, c.weights))
    well_formed(a)


def test_family_weights_and_sizes():
    rng = np.random.default_rng(0)
    assert set(g05(40, rng).weights) == {1.0}
    assert set(pm1s(60, rng).weights) == {-1.0, 1.0}
    w = w05(40, rng).weights
    assert set(w) <= set(range(-10, 11)) - {0} and w.min() < 0 < w.max()
    assert set(pw05(40, rng).weights) <= set(range(1, 11))
    density = len(g05(60, rng).edges) / (60 * 59 / 2)
    assert 0.4 < density < 0.6
    assert bqp(20, rng).n == 21
    Q = bqp_matrix(50, rng)
    assert np.array_equal(Q, Q.T) and np.abs(Q).max() <= 100 and np.all(Q == np.round(Q))
    torus = t2g(6, rng)
    assert torus.n == 36 and len(torus.edges) == 72
    assert np.all(np.bincount(torus.edges.ravel(), minlength=36) == 4)
    assert np.all(torus.weights == np.round(torus.weights)) and np.abs(torus.weights).max() > 1e4
    with pytest.raises(ValueError, match="L must be"):
        t2g(2, rng)


def test_biqmac_round_trip(tmp_path):
    for graph in (w05(12, 1), t2g(4, 2), bqp(9, 3)):
        path = tmp_path / "g.txt"
        write_graph(path, graph)
        lines = path.read_text().splitlines()
        assert lines[0] == f"{graph.n} {len(graph.edges)}"
        back = read_biqmac(path)
        assert back.n == graph.n and np.array_equal(back.edges, graph.edges) and np.array_equal(back.weights, graph.weights)


def test_read_edge_list(tmp_path):
    path = tmp_path / "user.txt"
    path.write_text("# a comment\n0 1 2.5\n\n2 1 -3\n1 3 1\n")
    graph = read_edge_list(path)
    assert graph.n == 4
    assert graph.edges.tolist() == [[0, 1], [1, 2], [1, 3]] and graph.weights.tolist() == [2.5, -3.0, 1.0]
    assert read_edge_list(path, n=6).n == 6


@pytest.mark.parametrize("text, line, message", [
    ("0 1 1\n0 2\n", 2, "expected 3 fields"),
    ("0 1 1\n\n0 x 1\n", 3, "node v must be an integer"),
    ("0 1 abc\n", 1, "weight w must be a number"),
    ("0 1 inf\n", 1, "must be finite"),
    ("0 1 1\n2 2 1\n", 2, "self-loop"),
    ("0 1 1\n1 2 1\n# c\n1 0 4\n", 4, "repeats the edge of line 1"),
    ("0 -1 1\n", 1, "out of range"),
])
def test_read_edge_list_errors_name_file_and_line(tmp_path, text, line, message):
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(GraphFormatError, match=message) as error:
        read_edge_list(path)
    assert f"bad.txt:{line}:" in str(error.value)
    assert isinstance(error.value, ValueError)


@pytest.mark.parametrize("text, line, message", [
    ("3\n1 2 1\n", 1, "header must be 'n m'"),
    ("3 2\n1 2 1\n", 1, "header says m=2"),
    ("3 2\n1 2 1\n1 4 1\n", 3, "out of range"),
    ("3 2\n1 2 1\n0 2 1\n", 3, "out of range"),
    ("3 1\n1 2 1 5\n", 2, "expected 3 fields"),
])
def test_read_biqmac_errors(tmp_path, text, line, message):
    path = tmp_path / "bad.mc"
    path.write_text(text)
    with pytest.raises(GraphFormatError, match=message) as error:
        read_biqmac(path)
    assert f"bad.mc:{line}:" in str(error.value)


def test_read_qubo(tmp_path):
    path = tmp_path / "q.txt"
    path.write_text("# Q\n1 -2 0\n-2 3 4\n0 4 -5\n")
    assert read_qubo(path).tolist() == [[1, -2, 0], [-2, 3, 4], [0, 4, -5]]
    path.write_text("1 2\n2 x\n")
    with pytest.raises(GraphFormatError, match=r"q.txt:2: entry 2 must be a number"):
        read_qubo(path)
    path.write_text("1 2\n\n2 3 4\n")
    with pytest.raises(GraphFormatError, match=r"q.txt:3: a 2x2 matrix needs 2 entries per row, got 3"):
        read_qubo(path)


def test_node_ids_are_checked_against_the_limit_before_allocating(tmp_path):
    path = tmp_path / "far.txt"
    path.write_text("0 1 1\n0 1000000000 1\n")
    with pytest.raises(GraphFormatError, match=r"far.txt:2: node 1000000000 is over the limit of 10,000 nodes"):
        read_edge_list(path)
    path.write_text("0 1 1\n1 4 1\n")
    assert read_edge_list(path).n == 5
    with pytest.raises(GraphFormatError, match="node 4 is over the limit of 4 nodes"):
        read_edge_list(path, max_nodes=4)
    with pytest.raises(GraphFormatError, match="n = 20,000 nodes is over the limit"):
        read_edge_list(path, n=20_000)
    path.write_text(f"{MAX_NODES + 1} 0\n")
    with pytest.raises(GraphFormatError, match=r":1: n = 10,001 nodes is over the limit of 10,000"):
        read_biqmac(path)


@pytest.mark.parametrize("weight, message", [
    ("1e308", r"weight w must be at most 1e\+12 in magnitude, got 1e308"),
    ("-2e12", "got -2e12"),
    ("nan", "must be finite"),
])
def test_absurd_weights_are_refused(tmp_path, weight, message):
    path = tmp_path / "w.txt"
    path.write_text(f"0 1 1\n1 2 {weight}\n")
    with pytest.raises(GraphFormatError, match=message) as error:
        read_edge_list(path)
    assert "w.txt:2:" in str(error.value)
    path.write_text(f"0 1 {MAX_ABS_WEIGHT:g}\n")
    assert read_edge_list(path).weights.tolist() == [MAX_ABS_WEIGHT]


def test_qubo_size_and_edge_count_limits(tmp_path, monkeypatch):
    path = tmp_path / "q.txt"
    path.write_text("0\n" * (MAX_QUBO_VARIABLES + 1))
    with pytest.raises(GraphFormatError, match="1,001 rows is over the limit of 1,000 variables"):
        read_qubo(path)
    path.write_text("1 0\n0 1e300\n")
    with pytest.raises(GraphFormatError, match="q.txt:2: entry 2 must be at most 1e"):
        read_qubo(path)
    monkeypatch.setattr(instances, "MAX_EDGES", 2)
    path.write_text("0 1 1\n1 2 1\n2 3 1\n")
    with pytest.raises(GraphFormatError, match="3 edge lines is over the limit of 2 edges"):
        read_edge_list(path)


def test_unreadable_files_are_input_errors(tmp_path):
    path = tmp_path / "blob.txt"
    path.write_bytes(bytes(range(256)))
    with pytest.raises(InputError, match=r"graph file .*blob\.txt: a binary file"):
        read_edge_list(path)
    with pytest.raises(InputError, match=r"QUBO file .*blob\.txt: a binary file"):
        read_qubo(path)
    path.write_text("0 " * 50_000)
    with pytest.raises(GraphFormatError, match=r"got 50000: '0 0 0 .*\.\.\. \(99,999 characters\)'$"):
        read_edge_list(path)
    assert issubclass(GraphFormatError, InputError)


@pytest.mark.parametrize("seed", range(4))
def test_brute_force_matches_enumeration(seed):
    rng = np.random.default_rng(seed)
    graph = w05(int(rng.integers(2, 10)), rng)
    best = max(graph.cut(np.array(bits)) for bits in itertools.product([0, 1], repeat=graph.n))
    opt, sides = brute_force_maxcut(graph)
    assert opt == best == graph.cut(sides)


def test_brute_force_chunks_and_limits():
    graph = pw05(18, np.random.default_rng(2))  # 2^17 assignments: several chunks
    opt, sides = brute_force_maxcut(graph)
    assert opt == graph.cut(sides)
    assert local_search_maxcut(graph, restarts=50, rng=0)[0] <= opt
    with pytest.raises(ValueError, match="n <= 22"):
        brute_force_maxcut(g05(23, 0))
    empty = WeightedGraph(1, np.zeros((0, 2), dtype=int), np.zeros(0))
    assert brute_force_maxcut(empty)[0] == 0.0


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_local_search_finds_small_optimum(name):
    graph = FAMILIES[name](3 if name == "t2g" else 12, np.random.default_rng(1))
    opt, _ = brute_force_maxcut(graph)
    best, sides = local_search_maxcut(graph, restarts=50, rng=np.random.default_rng(0))
    assert best == graph.cut(sides) == opt
    again = local_search_maxcut(graph, restarts=50, rng=np.random.default_rng(0))
    assert again[0] == best and np.array_equal(again[1], sides)


def test_local_search_is_one_flip_optimal():
    graph = w05(60, np.random.default_rng(3))
    best, sides = local_search_maxcut(graph, restarts=5, rng=0)
    for i in range(graph.n):
        flipped = sides.copy()
        flipped[i] ^= 1
        assert graph.cut(flipped) <= best


def test_ratio_at_brute_force_optimum():
    graph = w05(10, np.random.default_rng(9))
    opt, _ = brute_force_maxcut(graph)
    assert performance_ratio(opt, opt, graph.sum_negative) == 1.0
    for bits in itertools.product([0, 1], repeat=graph.n):
        assert 0.0 <= performance_ratio(graph.cut(np.array(bits)), opt, graph.sum_negative) <= 1.0
