"""Depth-1 QAOA simulator (spec §3.1, §10): statevector vs qiskit and dense expm,
analytic gradients vs central differences, special values and periods, the Wang et al. closed form,
solve_subgraph bookkeeping, QUBO -> MaxCut reduction."""
from __future__ import annotations

import itertools
import time

import numpy as np
import pytest
from scipy.linalg import expm

from tasks.quantum.graph import WeightedGraph
from tasks.quantum.instances import brute_force_maxcut, g05, pw05, w05
from tasks.quantum.qaoa import cost_table, expectation_and_gradient, optimise, qiskit_circuit, solve_subgraph, statevector
from tasks.quantum.qubo import assignment_from_sides, qubo_to_maxcut


def random_graph(n: int, rng: np.random.Generator, p: float = 0.6, integer: bool = False) -> WeightedGraph:
    iu, ju = np.triu_indices(n, 1)
    keep = rng.random(iu.size) < p
    m = int(keep.sum())
    weights = rng.integers(-5, 6, m).astype(float) if integer else rng.normal(size=m)
    return WeightedGraph(n, np.stack([iu[keep], ju[keep]], axis=1), weights)


def dense_operators(graph: WeightedGraph) -> tuple[np.ndarray, np.ndarray]:
    """Dense H_C and Σ_q X_q in little-endian order (qubit q = bit q), built from Kronecker products."""
    n = graph.n
    eye, Z, X = np.eye(2), np.diag([1.0, -1.0]), np.array([[0.0, 1.0], [1.0, 0.0]])

    def on(ops: dict[int, np.ndarray]) -> np.ndarray:
        out = np.eye(1)
        for q in reversed(range(n)):  # most significant qubit first in the Kronecker product
            out = np.kron(out, ops.get(q, eye))
        return out

    H = sum(0.5 * w * on({int(u): Z, int(v): Z}) for (u, v), w in zip(graph.edges, graph.weights))
    Xs = sum(on({q: X}) for q in range(n))
    return np.asarray(H, dtype=float) + np.zeros((1 << n, 1 << n)), Xs


@pytest.mark.parametrize("seed", range(6))
def test_statevector_matches_qiskit(seed):
    from qiskit.quantum_info import Statevector

    rng = np.random.default_rng(seed)
    graph = random_graph(int(rng.integers(2, 9)), rng)
    gamma, beta = rng.uniform(0, 2 * np.pi, 2)
    ours = statevector(graph, gamma, beta)
    theirs = Statevector(qiskit_circuit(graph, gamma, beta)).data
    assert abs(np.vdot(theirs, ours)) ** 2 > 1 - 1e-10
    phase = np.vdot(ours, theirs) / abs(np.vdot(ours, theirs))
    assert np.max(np.abs(ours * phase - theirs)) < 1e-10


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_statevector_matches_dense_expm(n):
    rng = np.random.default_rng(n)
    graph = random_graph(n, rng, p=1.0)
    H, Xs = dense_operators(graph)
    assert np.allclose(np.diag(H), cost_table(graph)) and np.allclose(H, np.diag(np.diag(H)))
    gamma, beta = 0.7, -1.3
    plus = np.full(1 << n, (1 << n) ** -0.5)
    expected = expm(-1j * beta * Xs) @ expm(-1j * gamma * H) @ plus
    assert np.max(np.abs(statevector(graph, gamma, beta) - expected)) < 1e-12


def test_cost_table_is_half_w_minus_cut():
    rng = np.random.default_rng(3)
    graph = random_graph(6, rng, integer=True)
    table = cost_table(graph)
    W = graph.weights.sum()
    for index in range(1 << graph.n):
        sides = (index >> np.arange(graph.n)) & 1
        assert table[index] == W / 2 - graph.cut(sides)


@pytest.mark.parametrize("seed", range(5))
def test_gradient_matches_central_differences(seed):
    rng = np.random.default_rng(seed)
    graph = random_graph(int(rng.integers(2, 8)), rng)
    table = cost_table(graph)
    gamma, beta = rng.uniform(0, 2 * np.pi, 2)
    _, d_gamma, d_beta = expectation_and_gradient(table, gamma, beta)
    h = 1e-5
    fd_gamma = (expectation_and_gradient(table, gamma + h, beta)[0] - expectation_and_gradient(table, gamma - h, beta)[0]) / (2 * h)
    fd_beta = (expectation_and_gradient(table, gamma, beta + h)[0] - expectation_and_gradient(table, gamma, beta - h)[0]) / (2 * h)
    scale = max(abs(d_gamma), abs(d_beta), 1e-3)
    assert abs(d_gamma - fd_gamma) / scale < 1e-6
    assert abs(d_beta - fd_beta) / scale < 1e-6


def test_expectation_equals_dense_expectation():
    graph = random_graph(5, np.random.default_rng(11))
    psi = statevector(graph, 0.4, 2.1)
    H, _ = dense_operators(graph)
    assert expectation_and_gradient(graph, 0.4, 2.1)[0] == pytest.approx(np.vdot(psi, H @ psi).real, abs=1e-12)


def test_special_values():
    rng = np.random.default_rng(5)
    graph = random_graph(6, rng, integer=True)
    table = cost_table(graph)
    W = graph.weights.sum()
    # γ = 0: ⟨H_C⟩ = 0, expected cut W/2
    psi = statevector(graph, 0.0, 1.234)
    assert expectation_and_gradient(table, 0.0, 1.234)[0] == pytest.approx(0.0, abs=1e-12)
    assert np.sum(np.abs(psi) ** 2 * (W / 2 - table)) == pytest.approx(W / 2, abs=1e-10)
    # β = 0: uniform distribution
    assert np.allclose(np.abs(statevector(graph, 2.345, 0.0)) ** 2, 1 / 64, atol=1e-14)
    for gamma, beta in rng.uniform(0, 2 * np.pi, (4, 2)):
        E = expectation_and_gradient(table, gamma, beta)[0]
        assert expectation_and_gradient(table, gamma, beta + np.pi)[0] == pytest.approx(E, abs=1e-9)
        assert expectation_and_gradient(table, gamma + 2 * np.pi, beta)[0] == pytest.approx(E, abs=1e-9)


def test_gamma_plus_pi_is_not_a_period_in_general():
    """The ½ in H_C makes 2π (not π) the γ period for integer weights: a unit path 0-1-2 has
    eigenvalues {−1, 0, 1}, so its gaps are odd and γ + π changes E."""
    graph = WeightedGraph(3, np.array([[0, 1], [1, 2]]), np.array([1.0, 1.0]))
    E = expectation_and_gradient(graph, 0.3, 0.4)[0]
    assert abs(expectation_and_gradient(graph, 0.3 + np.pi, 0.4)[0] - E) > 1e-3


def wang_edge(gamma: float, beta: float, d_u: int, d_v: int, lam: int) -> float:
    """⟨C_uv⟩ for p = 1 (Wang et al. 2018), C = Σ(1 − ZZ)/2, phase e^{−iγC}, mixer e^{−iβΣX}."""
    c = np.cos(gamma)
    return (0.5 + 0.25 * np.sin(4 * beta) * np.sin(gamma) * (c ** d_u + c ** d_v)
            - 0.25 * np.sin(2 * beta) ** 2 * c ** (d_u + d_v - 2 * lam) * (1 - np.cos(2 * gamma) ** lam))


@pytest.mark.parametrize("seed", range(3))
def test_wang_closed_form_at_minus_gamma(seed):
    rng = np.random.default_rng(seed)
    graph = g05(7, rng)
    adjacency = np.zeros((7, 7), dtype=int)
    adjacency[graph.edges[:, 0], graph.edges[:, 1]] = adjacency[graph.edges[:, 1], graph.edges[:, 0]] = 1
    degree = adjacency.sum(axis=1)
    gamma, beta = rng.uniform(0, 2 * np.pi, 2)
    expected_cut = sum(wang_edge(-gamma, beta, degree[u] - 1, degree[v] - 1, int(adjacency[u] @ adjacency[v]))
                       for u, v in graph.edges)
    E = expectation_and_gradient(graph, gamma, beta)[0]
    assert graph.weights.sum() / 2 - E == pytest.approx(expected_cut, abs=1e-10)


def test_optimise_descends_and_reports_history():
    graph = pw05(8, np.random.default_rng(0))
    gamma, beta, history = optimise(graph, 0.1, 0.2, steps=20, lr=0.001)
    assert len(history) == 21
    assert history[-1] < history[0]
    assert history[-1] == pytest.approx(expectation_and_gradient(graph, gamma, beta)[0])
    assert optimise(graph, 0.1, 0.2, steps=0) == (0.1, 0.2, [history[0]])


@pytest.mark.parametrize("seed", range(4))
def test_solve_subgraph_cut_matches_sides(seed):
    rng = np.random.default_rng(seed)
    graph = w05(int(rng.integers(2, 11)), rng)
    cut, sides, (gamma, beta) = solve_subgraph(graph, (1.0, 2.0), rng=np.random.default_rng(seed))
    assert sides.shape == (graph.n,) and set(np.unique(sides)) <= {0, 1}
    assert cut == graph.cut(sides)
    assert cut <= brute_force_maxcut(graph)[0]
    again = solve_subgraph(graph, (1.0, 2.0), rng=np.random.default_rng(seed))
    assert again[0] == cut and np.array_equal(again[1], sides) and again[2] == (gamma, beta)


def test_solve_subgraph_near_optimal_with_many_shots():
    graph = pw05(8, np.random.default_rng(1))
    cut, _, _ = solve_subgraph(graph, (0.5, 0.5), shots=4000, rng=np.random.default_rng(0))
    assert cut == brute_force_maxcut(graph)[0]


def test_solve_subgraph_without_edges():
    single = WeightedGraph(1, np.zeros((0, 2), dtype=int), np.zeros(0))
    cut, sides, params = solve_subgraph(single, (0.3, 0.4), rng=np.random.default_rng(0))
    assert cut == 0.0 and sides.tolist() == [0] and params == (0.3, 0.4)
    empty = WeightedGraph(4, np.zeros((0, 2), dtype=int), np.zeros(0))
    cut, sides, _ = solve_subgraph(empty, (0.3, 0.4), rng=np.random.default_rng(0))
    assert cut == 0.0 and sides.tolist() == [0, 0, 0, 0]


def test_solve_subgraph_rejects_bad_input():
    graph = g05(4, np.random.default_rng(0))
    with pytest.raises(ValueError, match="shots"):
        solve_subgraph(graph, (0.1, 0.2), shots=0, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="gamma"):
        solve_subgraph(graph, (np.nan, 0.2), rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="lr"):
        optimise(graph, 0.1, 0.2, lr=-1.0)


def test_ten_qubit_solve_is_fast():
    graph = pw05(10, np.random.default_rng(0))
    rng = np.random.default_rng(0)
    solve_subgraph(graph, (1.0, 2.0), rng=rng)
    start = time.perf_counter()
    for _ in range(10):
        solve_subgraph(graph, (1.0, 2.0), rng=rng)
    assert (time.perf_counter() - start) / 10 < 0.1  # ~7 ms measured; generous bound for loaded machines


@pytest.mark.parametrize("seed", range(4))
def test_qubo_reduction_agrees_for_every_x(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 9))
    Q = rng.integers(-20, 21, (n, n)).astype(float)
    Q = Q + Q.T
    graph = qubo_to_maxcut(Q)
    assert graph.n == n + 1 and np.all(graph.weights != 0)
    values = []
    for bits in itertools.product([0, 1], repeat=n + 1):
        sides = np.array(bits)
        x = assignment_from_sides(sides)
        assert graph.cut(sides) == x @ Q @ x
        values.append(x @ Q @ x)
    assert brute_force_maxcut(graph)[0] == max(values)


def test_qubo_reduction_n10_and_nonsymmetric():
    rng = np.random.default_rng(7)
    Q = rng.integers(-9, 10, (10, 10)).astype(float)  # not symmetric: (Q + Qᵀ)/2 has the same xᵀQx
    graph = qubo_to_maxcut(Q)
    xs = ((np.arange(1 << 10)[:, None] >> np.arange(10)) & 1)
    best = max(x @ Q @ x for x in xs)
    opt, sides = brute_force_maxcut(graph)
    assert opt == best
    x = assignment_from_sides(sides)
    assert x @ Q @ x == best
