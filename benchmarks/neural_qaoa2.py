"""QAOA on one 10-qubit subgraph (20 GD steps + 1000 shots): our numpy fast path vs the same
optimisation with the state simulated by qiskit-aer (gradients by central differences, as a
circuit simulator has no analytic gradient here); and QAOA^2 wall time vs graph size."""
from __future__ import annotations

from time import perf_counter

import numpy as np

from tasks.quantum.instances import g05, w05
from tasks.quantum.qaoa import cost_table, qiskit_circuit, solve_subgraph
from tasks.quantum.qaoa2 import baseline_policy, qaoa_squared

from .common import write_result

STEPS, LR, SHOTS, REPEATS = 20, 0.01, 1000, 5
SIZES = (50, 100, 200, 400)


def aer_solve(graph, gamma: float, beta: float, rng: np.random.Generator, simulator) -> float:
    """The same GD on E(gamma, beta) with aer statevectors; best cut of 1000 shots."""
    from qiskit import transpile

    table = cost_table(graph)

    def energy(g: float, b: float) -> tuple[float, np.ndarray]:
        circuit = qiskit_circuit(graph, g, b)
        circuit.save_statevector()
        state = np.asarray(simulator.run(transpile(circuit, simulator)).result().get_statevector())
        probabilities = np.abs(state) ** 2
        return float(probabilities @ table), probabilities

    h = 1e-6
    for _ in range(STEPS):
        d_gamma = (energy(gamma + h, beta)[0] - energy(gamma - h, beta)[0]) / (2 * h)
        d_beta = (energy(gamma, beta + h)[0] - energy(gamma, beta - h)[0]) / (2 * h)
        gamma, beta = gamma - LR * d_gamma, beta - LR * d_beta
    _, probabilities = energy(gamma, beta)
    shots = rng.choice(len(probabilities), size=SHOTS, p=probabilities / probabilities.sum())
    return max(graph.cut((shot >> np.arange(graph.n)) & 1) for shot in np.unique(shots))


def main() -> dict:
    from qiskit_aer import AerSimulator

    graph = w05(10, np.random.default_rng(0))
    simulator = AerSimulator(method="statevector")
    fast, aer = [], []
    for k in range(REPEATS):
        start = perf_counter()
        solve_subgraph(graph, (1.0, 0.5), steps=STEPS, lr=LR, shots=SHOTS, rng=np.random.default_rng(k))
        fast.append(perf_counter() - start)
        start = perf_counter()
        aer_solve(graph, 1.0, 0.5, np.random.default_rng(k), simulator)
        aer.append(perf_counter() - start)
    scaling = []
    for n in SIZES:
        big = g05(n, np.random.default_rng(n))
        for policy in ("random", "kl"):
            start = perf_counter()
            result = qaoa_squared(big, baseline_policy(policy), n_max=10, rng=np.random.default_rng(0))
            scaling.append({"n": n, "policy": policy, "time_s": perf_counter() - start, "levels": result.levels})
            print(f"QAOA^2 n={n} {policy}: {scaling[-1]['time_s']:.2f} s, {result.levels} levels", flush=True)
    result = {"subgraph": {"qubits": 10, "steps": STEPS, "shots": SHOTS, "fast_median_s": float(np.median(fast)),
                           "aer_median_s": float(np.median(aer)), "ratio_aer_over_fast": float(np.median(aer) / np.median(fast))},
              "qaoa2_scaling": scaling}
    print(f"10-qubit solve: fast {np.median(fast) * 1e3:.1f} ms, aer {np.median(aer) * 1e3:.0f} ms "
          f"(x{result['subgraph']['ratio_aer_over_fast']:.0f})")
    print(f"-> {write_result('neural_qaoa2', result)}")
    return result


if __name__ == "__main__":
    main()
