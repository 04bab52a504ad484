"""QAOA^2 divide and conquer (spec §3.2, code `qaoa_square`).

At each level the policy splits the current graph into parts of <= n_max nodes and gives each part its
initial (gamma, beta); every part is solved by QAOA; the parts become super-nodes of a coarse graph whose
edge (a, b) has weight W_ab = w-_ab - w+_ab, where w+ / w- are the cross weights the part solutions
currently cut / leave uncut. Flipping super-node a flips every bit of part a, which swaps cut and uncut
cross edges, so cutting the coarse edge gains exactly W_ab. With const = sum of part cuts + sum of w+,
const + cut(final) is the exact cut of the bitstring reconstructed top-down.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from tasks.quantum.graph import WeightedGraph
from tasks.quantum.partition import SAMPLING_POLICIES

Params = tuple[float, float]
# policy(graph_at_level, n_max, rng, level) -> (parts, params), one (gamma, beta) per part
Policy = Callable[[WeightedGraph, int, np.random.Generator, int], tuple[list[np.ndarray], list[Params]]]
# solve_subgraph(graph, params, *, steps, lr, shots, rng) -> (cut, sides (n,) 0/1, final params)
SubgraphSolver = Callable[..., tuple[float, np.ndarray, Params]]


@dataclass
class QAOA2Result:
    """cut = const + final-level cut = graph.cut(sides); levels = number of policy calls (the last one is
    the final <= n_max graph); history[l] = {"n": nodes, "k": parts, "m": edges} of level l's graph."""

    cut: float
    sides: np.ndarray
    levels: int
    level0_parts: list[np.ndarray]
    level0_params: list[Params]
    time_s: float
    history: list[dict] = field(default_factory=list)


def baseline_policy(name: str) -> Policy:
    """A partition policy of SAMPLING_POLICIES (the compared baselines and the perturbed ones of the
    critic data) with U[0, 2pi) gamma and beta per part drawn from rng (spec §4)."""
    if name not in SAMPLING_POLICIES:
        raise ValueError(f"baseline policy must be one of {sorted(SAMPLING_POLICIES)}, got {name!r}")
    partition = SAMPLING_POLICIES[name]

    def policy(graph: WeightedGraph, n_max: int, rng: np.random.Generator, level: int):
        parts = partition(graph, n_max, rng)
        params = [(float(g), float(b)) for g, b in rng.uniform(0.0, 2 * np.pi, size=(len(parts), 2))]
        return parts, params

    policy.__name__ = f"{name}_policy"
    return policy


def _check_parts(parts: list[np.ndarray], params: list, n: int, n_max: int, level: int) -> list[np.ndarray]:
    parts = [np.asarray(p, dtype=int) for p in parts]
    if len(params) != len(parts):
        raise ValueError(f"level {level}: policy gave {len(parts)} parts but {len(params)} params")
    sizes = [len(p) for p in parts]
    if min(sizes, default=0) < 1 or max(sizes, default=0) > n_max:
        raise ValueError(f"level {level}: part sizes must lie in [1, n_max={n_max}], got {sizes}")
    flat = np.concatenate(parts)
    if len(flat) != n or not np.array_equal(np.sort(flat), np.arange(n)):
        raise ValueError(f"level {level}: parts are not a disjoint cover of the {n} nodes")
    if len(parts) >= n:
        raise ValueError(f"level {level}: {len(parts)} parts for {n} nodes makes no progress")
    return parts


def _solve(graph: WeightedGraph, params: Params, solve_subgraph: SubgraphSolver, rng: np.random.Generator,
           **kw) -> tuple[float, np.ndarray]:
    """(cut, sides) of one QAOA solve; the cut is recomputed from the sides so the accounting is exact.
    An edgeless graph has cut 0 for every bitstring and is not simulated."""
    if len(graph.weights) == 0:
        return 0.0, np.zeros(graph.n, dtype=int)
    _, sides, _ = solve_subgraph(graph, params, rng=rng, **kw)
    sides = np.asarray(sides, dtype=int)
    return graph.cut(sides), sides


def coarse_graph(graph: WeightedGraph, label: np.ndarray, bits: np.ndarray, k: int) -> tuple[WeightedGraph, float]:
    """The coarse graph on k super-nodes and sum of w+ (cross weight cut by the part solutions `bits`).
    label[i] = part of node i; edges where W_ab = w-_ab - w+_ab != 0."""
    a, b = label[graph.edges[:, 0]], label[graph.edges[:, 1]]
    cross = a != b
    a, b, w = a[cross], b[cross], graph.weights[cross]
    is_cut = bits[graph.edges[cross, 0]] != bits[graph.edges[cross, 1]]
    w_plus = float(np.sum(w[is_cut]))
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    keys, inverse = np.unique(lo * k + hi, return_inverse=True)
    big_w = np.bincount(inverse, weights=np.where(is_cut, -w, w), minlength=len(keys))
    keep = big_w != 0
    edges = np.stack([keys[keep] // k, keys[keep] % k], axis=1).astype(int).reshape(-1, 2)
    return WeightedGraph(k, edges, big_w[keep]), w_plus


def qaoa_squared(graph: WeightedGraph, policy: Policy, *, n_max: int, rng: np.random.Generator,
                 solve_subgraph: SubgraphSolver | None = None, steps: int = 20, lr: float = 0.01,
                 shots: int = 1000) -> QAOA2Result:
    """Run QAOA^2 on `graph` (spec §3.2). The policy is called at every level, including the final
    <= n_max graph, where only params[0] is used and the whole graph is one part."""
    if not isinstance(n_max, (int, np.integer)) or n_max < 2:
        raise ValueError(f"n_max must be an integer >= 2, got {n_max!r}")
    if graph.n < 1:
        raise ValueError(f"graph must have at least one node, got n={graph.n}")
    if solve_subgraph is None:
        from tasks.quantum.qaoa import solve_subgraph
    kw = {"steps": steps, "lr": lr, "shots": shots}
    start = time.perf_counter()
    const, current, history = 0.0, graph, []
    trail: list[tuple[np.ndarray, np.ndarray]] = []  # per level: (label, bits) to reconstruct top-down
    level0: tuple[list[np.ndarray], list[Params]] | None = None
    while True:
        level = len(history)
        parts, params = policy(current, n_max, rng, level)
        if current.n <= n_max:  # final level: one part, the whole graph
            if len(params) < 1:
                raise ValueError(f"level {level}: policy gave no params for the final graph")
            parts, params = [np.arange(current.n)], [params[0]]
        else:
            parts = _check_parts(parts, params, current.n, n_max, level)
        if level0 is None:
            level0 = (parts, list(params))
        history.append({"n": current.n, "k": len(parts), "m": len(current.weights)})
        if current.n <= n_max:
            final_cut, x = _solve(current, params[0], solve_subgraph, rng, **kw)
            break
        label = np.empty(current.n, dtype=int)
        bits = np.zeros(current.n, dtype=int)
        for a, (part, theta) in enumerate(zip(parts, params)):
            label[part] = a
            cut_a, bits[part] = _solve(current.subgraph(part), theta, solve_subgraph, rng, **kw)
            const += cut_a
        current, w_plus = coarse_graph(current, label, bits, len(parts))
        const += w_plus
        trail.append((label, bits))
    for label, bits in reversed(trail):  # super-node assigned 1 flips every bit of its part
        x = bits ^ x[label]
    return QAOA2Result(cut=const + final_cut, sides=x, levels=len(history), level0_parts=level0[0],
                       level0_params=level0[1], time_s=time.perf_counter() - start, history=history)
