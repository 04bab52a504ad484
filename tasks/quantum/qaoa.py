"""Depth-1 QAOA on one small subgraph, simulated exactly with numpy (spec §3.1).

The state lives in qiskit's little-endian order: basis index i holds qubit q in bit q of i.
  H_C = ½ Σ_(u,v) w_uv Z_u Z_v                     (diagonal: `cost_table`, Cut = W/2 − H_C)
  |ψ(γ, β)⟩ = Π_q e^{−iβX_q} · e^{−iγH_C} · H^{⊗n}|0⟩
            = RX(2β)^{⊗n} · Π_edges RZZ(γ·w_uv) · H^{⊗n}|0⟩ in qiskit gates.
E(γ, β) = ⟨ψ|H_C|ψ⟩ is minimised by plain gradient descent with analytic gradients, then the
best-cut bitstring among `shots` samples of |ψ|² is returned (`solve_subgraph`).

Why numpy and not autograd: one 10-qubit solve is 20 gradient steps on a 1024-vector; the whole
cost is Python overhead, so the mixer is applied qubit by qubit on reshaped views and the two
vectors the gradient needs are mixed in one batch.
"""
from __future__ import annotations

import math

import numpy as np

from tasks.quantum.graph import WeightedGraph

MAX_QUBITS = 24


def _check_graph(graph: WeightedGraph) -> None:
    if not 1 <= graph.n <= MAX_QUBITS:
        raise ValueError(f"graph.n must be in [1, {MAX_QUBITS}] for a statevector simulation, got {graph.n}")


def _check_angle(name: str, value: float) -> float:
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite angle, got {value}")
    return value


def cost_table(graph: WeightedGraph) -> np.ndarray:
    """(2^n,) float: the diagonal of H_C = ½ Σ w_uv Z_u Z_v; Z_q = +1 when bit q of the index is 0."""
    _check_graph(graph)
    index = np.arange(1 << graph.n)
    spins = 1 - 2 * ((index[:, None] >> np.arange(graph.n)) & 1)  # (2^n, n) in {+1, −1}
    if len(graph.edges) == 0:
        return np.zeros(1 << graph.n)
    u, v = graph.edges[:, 0], graph.edges[:, 1]
    return 0.5 * ((spins[:, u] * spins[:, v]).astype(float) @ np.asarray(graph.weights, float))


def _table(graph_or_table: WeightedGraph | np.ndarray) -> np.ndarray:
    if isinstance(graph_or_table, WeightedGraph):
        return cost_table(graph_or_table)
    table = np.asarray(graph_or_table, dtype=float)
    if table.ndim != 1 or table.size < 2 or table.size & (table.size - 1):
        raise ValueError(f"a cost table must be a 1-D array of length 2^n (n >= 1), got shape {table.shape}")
    return table


def _mix(states: np.ndarray, beta: float) -> np.ndarray:
    """Apply Π_q e^{−iβX_q} to the last axis of `states` (shape (..., 2^n))."""
    c, s = math.cos(beta), -1j * math.sin(beta)
    lead, size = states.shape[:-1], states.shape[-1]
    out = states
    q = 1
    while q < size:
        view = out.reshape(*lead, -1, 2, q)  # axis −2 is the bit of this qubit
        new = np.empty_like(view)
        new[..., 0, :] = c * view[..., 0, :] + s * view[..., 1, :]
        new[..., 1, :] = c * view[..., 1, :] + s * view[..., 0, :]
        out = new.reshape(*lead, size)
        q <<= 1
    return out


def _x_sum(state: np.ndarray) -> np.ndarray:
    """(Σ_q X_q)|ψ⟩: the sum of ψ with each index bit flipped in turn."""
    size = state.shape[-1]
    out = np.zeros_like(state)
    q = 1
    while q < size:
        out += state.reshape(-1, 2, q)[:, ::-1, :].reshape(size)
        q <<= 1
    return out


def _phased(table: np.ndarray, gamma: float) -> np.ndarray:
    """φ = e^{−iγH_C}|+⟩^{⊗n}."""
    return np.exp(-1j * gamma * table) / math.sqrt(table.size)


def statevector(graph: WeightedGraph, gamma: float, beta: float) -> np.ndarray:
    """(2^n,) complex: |ψ(γ, β)⟩ for p = 1, in qiskit's basis order."""
    gamma, beta = _check_angle("gamma", gamma), _check_angle("beta", beta)
    return _mix(_phased(cost_table(graph), gamma), beta)


def expectation_and_gradient(graph_or_table: WeightedGraph | np.ndarray, gamma: float,
                             beta: float) -> tuple[float, float, float]:
    """(E, ∂E/∂γ, ∂E/∂β) with E = ⟨ψ|H_C|ψ⟩, exactly:
    ∂E/∂γ = 2 Re⟨H_C ψ | B(β)(−iH_C φ)⟩,  ∂E/∂β = 2 Re⟨H_C ψ | −i(Σ_q X_q) ψ⟩."""
    table = _table(graph_or_table)
    gamma, beta = _check_angle("gamma", gamma), _check_angle("beta", beta)
    phi = _phased(table, gamma)
    psi, dpsi_dgamma = _mix(np.stack([phi, -1j * table * phi]), beta)
    h_psi = table * psi
    energy = float(np.vdot(psi, h_psi).real)
    d_gamma = 2.0 * float(np.vdot(h_psi, dpsi_dgamma).real)
    d_beta = 2.0 * float(np.vdot(h_psi, -1j * _x_sum(psi)).real)
    return energy, d_gamma, d_beta


def _check_descent(steps: int, lr: float) -> None:
    if steps < 0:
        raise ValueError(f"steps must be >= 0, got {steps}")
    if not (lr > 0 and math.isfinite(lr)):
        raise ValueError(f"lr must be a positive finite step size, got {lr}")


def optimise(graph: WeightedGraph, gamma: float, beta: float, *, steps: int = 20,
             lr: float = 0.01) -> tuple[float, float, list[float]]:
    """Plain gradient descent on E(γ, β) from the given start (PennyLane's GradientDescentOptimizer).
    Returns the final (γ, β) and history: E before each step and at the end (steps + 1 values)."""
    _check_descent(steps, lr)
    return _descend(cost_table(graph), gamma, beta, steps, lr)


def _descend(table: np.ndarray, gamma: float, beta: float, steps: int,
             lr: float) -> tuple[float, float, list[float]]:
    history = []
    for _ in range(steps):
        energy, d_gamma, d_beta = expectation_and_gradient(table, gamma, beta)
        history.append(energy)
        gamma, beta = gamma - lr * d_gamma, beta - lr * d_beta
    history.append(expectation_and_gradient(table, gamma, beta)[0])
    return float(gamma), float(beta), history


def solve_subgraph(graph: WeightedGraph, params: tuple[float, float], *, steps: int = 20, lr: float = 0.01,
                   shots: int = 1000, rng: np.random.Generator) -> tuple[float, np.ndarray, tuple[float, float]]:
    """QAOA on one subgraph: GD from params = (γ, β), then the best cut among `shots` samples of |ψ|².
    Returns (cut value, sides (n,) int 0/1 with sides[q] = bit q of the sampled index, final (γ, β)).
    A graph without edges (n = 1 included) needs no circuit: cut 0, all sides 0, params unchanged."""
    gamma, beta = (_check_angle(name, value) for name, value in zip(("params[0] (gamma)", "params[1] (beta)"), params))
    if shots < 1:
        raise ValueError(f"shots must be >= 1, got {shots}")
    _check_descent(steps, lr)
    _check_graph(graph)
    if len(graph.edges) == 0:
        return 0.0, np.zeros(graph.n, dtype=int), (gamma, beta)

    table = cost_table(graph)
    gamma, beta, _ = _descend(table, gamma, beta, steps, lr)
    probs = np.abs(_mix(_phased(table, gamma), beta)) ** 2
    samples = rng.choice(table.size, size=shots, p=probs / probs.sum())
    best = int(samples[np.argmin(table[samples])])  # largest cut = smallest H_C (Cut = W/2 − H_C)
    sides = (best >> np.arange(graph.n)) & 1
    return graph.cut(sides), sides, (gamma, beta)


def qiskit_circuit(graph: WeightedGraph, gamma: float, beta: float):
    """The same p = 1 state as a qiskit.QuantumCircuit: H on all, RZZ(γ·w) per edge, RX(2β) per qubit."""
    from qiskit import QuantumCircuit

    circuit = QuantumCircuit(graph.n)
    circuit.h(range(graph.n))
    for (u, v), w in zip(graph.edges, graph.weights):
        circuit.rzz(float(gamma) * float(w), int(u), int(v))
    for q in range(graph.n):
        circuit.rx(2.0 * float(beta), q)
    return circuit
