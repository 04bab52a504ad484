"""SCIP reference optima (tasks/quantum/exact.py): equal to brute force on small graphs of every family
(signed and mixed-sign weights, the QUBO reduction, the torus), a cut that matches its sides, and on a
graph SCIP cannot close in its time limit, an unproved answer with a valid bound no worse than its start."""
from __future__ import annotations

import numpy as np
import pytest

from tasks.quantum.exact import odd_cycles, scip_maxcut
from tasks.quantum.graph import WeightedGraph
from tasks.quantum.instances import FAMILIES, brute_force_maxcut, g05, local_search_maxcut


@pytest.mark.parametrize("family, size", [("g05", 14), ("pm1s", 18), ("w05", 14), ("pw05", 14), ("bqp", 13), ("t2g", 4)])
def test_scip_proves_the_brute_force_optimum(family, size):
    graph = FAMILIES[family](size, np.random.default_rng(5))
    optimum, _ = brute_force_maxcut(graph)
    solved = scip_maxcut(graph, node_limit=10**6, time_limit=60.0)
    assert solved.proved and solved.gap == 0.0 and solved.status == "optimal"
    assert solved.cut == optimum == graph.cut(solved.sides) == solved.bound


def test_node_limited_answer_is_bounded_no_worse_than_its_start_and_deterministic():
    graph = g05(30, np.random.default_rng(1))  # dense, unit weights: odd cycles leave a gap of ~4% at the root
    start_cut, start = local_search_maxcut(graph, restarts=5, rng=0)
    solved = scip_maxcut(graph, node_limit=2, time_limit=60.0, start=start)
    assert not solved.proved and solved.gap > 0 and solved.status == "nodelimit" and solved.nodes == 2
    assert solved.cut == graph.cut(solved.sides) >= start_cut
    assert solved.bound >= solved.cut and solved.bound <= np.abs(graph.weights).sum()
    again = scip_maxcut(graph, node_limit=2, time_limit=60.0, start=start)
    assert (again.cut, again.bound) == (solved.cut, solved.bound)


def test_time_limit_is_reported():
    graph = g05(90, np.random.default_rng(1))
    solved = scip_maxcut(graph, node_limit=10**6, time_limit=0.2)
    assert not solved.proved and solved.status == "timelimit" and solved.cut == graph.cut(solved.sides)


def test_edgeless_graph_and_bad_time_limit():
    empty = WeightedGraph(4, np.zeros((0, 2), dtype=int), np.zeros(0))
    assert scip_maxcut(empty, node_limit=1, time_limit=1.0).cut == 0.0
    with pytest.raises(ValueError, match="time_limit"):
        scip_maxcut(empty, node_limit=1, time_limit=0.0)
    with pytest.raises(ValueError, match="node_limit"):
        scip_maxcut(empty, node_limit=0, time_limit=1.0)


def test_odd_cycle_cuts_prove_a_sparse_signed_graph_at_few_nodes():
    """pm1s at n = 60: the plain XOR formulation leaves a gap of tens of percent after hundreds of nodes (its LP
    bound is the sum of the positive weights); with odd-cycle cuts SCIP proves it within 50 nodes."""
    graph = FAMILIES["pm1s"](60, np.random.default_rng(1))
    solved = scip_maxcut(graph, node_limit=50, time_limit=60.0)
    assert solved.proved and solved.cut == graph.cut(solved.sides) == solved.bound
    assert solved.bound < 0.8 * graph.weights[graph.weights > 0].sum()


def test_odd_cycles_found_are_violated_and_have_an_odd_switched_set():
    triangle = np.array([[0, 1], [0, 2], [1, 2]])
    cycles = odd_cycles(3, triangle, np.ones(3))  # all three cut: no cut vector does that
    assert cycles == [([], [0, 1, 2])] or [sorted(c[1]) for c in cycles] == [[0, 1, 2]]
    assert odd_cycles(3, triangle, np.array([1.0, 1.0, 0.0])) == []  # a cut vector violates none
    square = np.array([[0, 1], [1, 2], [2, 3], [0, 3]])
    for kept, switched in odd_cycles(4, square, np.array([1.0, 1.0, 1.0, 0.0])):
        assert len(switched) % 2 == 1 and sorted(kept + switched) == [0, 1, 2, 3]
        y = np.array([1.0, 1.0, 1.0, 0.0])
        assert y[kept].sum() - y[switched].sum() < 1 - len(switched)  # violated
