"""Baseline partition policies of QAOA^2 (spec §4): random, modularity, boundary, kl.

Every policy is `(graph, n_max, rng) -> list[np.ndarray]`: a disjoint cover of the nodes 0..n-1 by
non-empty parts of at most n_max nodes (sorted node ids per part). A graph with <= n_max nodes is
one part. All randomness (shuffles, tie breaks, networkx seeds) comes from `rng`.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable

import networkx as nx
import numpy as np

from tasks.quantum.graph import WeightedGraph

Partition = list[np.ndarray]


def to_networkx(graph: WeightedGraph) -> nx.Graph:
    """nx.Graph on 0..n-1 (isolated nodes included) with edge attributes `weight` (signed) and `absw` (|w|)."""
    g = nx.Graph()
    g.add_nodes_from(range(graph.n))
    g.add_edges_from((int(u), int(v), {"weight": float(w), "absw": abs(float(w))})
                     for (u, v), w in zip(graph.edges, graph.weights))
    return g


def _check(graph: WeightedGraph, n_max: int) -> None:
    if not isinstance(n_max, (int, np.integer)) or n_max < 1:
        raise ValueError(f"n_max must be an integer >= 1, got {n_max!r}")
    if graph.n < 1:
        raise ValueError(f"graph must have at least one node, got n={graph.n}")


def _as_parts(groups: Iterable[Iterable[int]]) -> Partition:
    """Sorted int arrays, empty groups dropped."""
    return [np.sort(np.fromiter(g, dtype=int)) for g in groups if len(g) > 0]


def random_partition(graph: WeightedGraph, n_max: int, rng: np.random.Generator) -> Partition:
    """Shuffle the nodes and split them into ceil(n/n_max) nearly equal parts (sizes differ by <= 1)."""
    _check(graph, n_max)
    k = -(-graph.n // n_max)
    return _as_parts(np.array_split(rng.permutation(graph.n), k))


def split_large(parts: Partition, n_max: int, rng: np.random.Generator) -> Partition:
    """Split every part larger than n_max into ceil(size/n_max) random, nearly equal chunks."""
    out: Partition = []
    for part in parts:
        if len(part) <= n_max:
            out.append(np.sort(part))
        else:
            out.extend(_as_parts(np.array_split(rng.permutation(part), -(-len(part) // n_max))))
    return out


def merge_small(graph: WeightedGraph, parts: Partition, n_max: int, rng: np.random.Generator) -> Partition:
    """Repeatedly merge the pair of parts with the largest total connecting (signed) weight whose combined
    size is <= n_max; only pairs with connecting weight > -1 qualify (pairs with no edges, weight 0, do);
    ties are broken uniformly at random. Stops when no pair qualifies."""
    k = len(parts)
    label = np.empty(graph.n, dtype=int)
    for a, part in enumerate(parts):
        label[part] = a
    conn = np.zeros((k, k))
    if len(graph.weights):
        a, b = label[graph.edges[:, 0]], label[graph.edges[:, 1]]
        np.add.at(conn, (a, b), graph.weights)
        np.add.at(conn, (b, a), graph.weights)
    np.fill_diagonal(conn, 0.0)
    members = [list(p) for p in parts]
    size = np.array([len(p) for p in parts], dtype=float)
    alive = np.ones(k, dtype=bool)
    upper = np.triu(np.ones((k, k), dtype=bool), 1)
    while True:
        ok = upper & alive[:, None] & alive[None, :] & (size[:, None] + size[None, :] <= n_max) & (conn > -1)
        if not ok.any():
            break
        score = np.where(ok, conn, -np.inf)
        best = np.flatnonzero(score == score.max())
        i, j = np.unravel_index(best[rng.integers(len(best))], (k, k))
        members[i].extend(members[j])
        size[i] += size[j]
        conn[i, :] += conn[j, :]
        conn[:, i] += conn[:, j]
        conn[i, i] = 0.0
        alive[j] = False
    return _as_parts(members[a] for a in np.flatnonzero(alive))


def _communities(fn: Callable[..., list], g: nx.Graph, **kw) -> list:
    """Run a networkx community detection on signed weights; networkx divides by the total weight,
    so a graph whose signed weights sum to 0 falls back to |w| (our choice)."""
    try:
        return list(fn(g, weight="weight", **kw))
    except ZeroDivisionError:
        return list(fn(g, weight="absw", **kw))


def modularity_partition(graph: WeightedGraph, n_max: int, rng: np.random.Generator) -> Partition:
    """networkx greedy modularity communities of the unweighted graph (as the authors' code calls it; the
    spec's "weighted" was wrong), then split_large and merge_small (which do use the signed weights)."""
    _check(graph, n_max)
    if graph.n <= n_max:
        return [np.arange(graph.n)]
    parts = _as_parts(nx.community.greedy_modularity_communities(to_networkx(graph), weight=None))
    return merge_small(graph, split_large(parts, n_max, rng), n_max, rng)


def _neighbours(graph: WeightedGraph) -> list[np.ndarray]:
    adj: list[list[int]] = [[] for _ in range(graph.n)]
    for u, v in graph.edges:
        adj[u].append(int(v))
        adj[v].append(int(u))
    return [np.array(a, dtype=int) for a in adj]


def reduce_boundary(graph: WeightedGraph, label: np.ndarray, n_max: int, rng: np.random.Generator) -> np.ndarray:
    """Single-node local moves: move a node into the part of one of its neighbours when that strictly lowers
    the number of boundary nodes (nodes with a neighbour in another part) and the target part has fewer
    than n_max nodes. Nodes are visited in a random order per sweep; sweeps repeat until no move is made.
    Terminates because every move lowers an integer >= 0. Returns the new labels."""
    label = label.copy()
    adj = _neighbours(graph)
    size = np.bincount(label, minlength=label.max() + 1)
    foreign = np.array([np.count_nonzero(label[adj[x]] != label[x]) for x in range(graph.n)])  # boundary iff > 0
    moved = True
    while moved:
        moved = False
        for v in rng.permutation(graph.n):
            nbr = adj[v]
            if len(nbr) == 0:
                continue
            own, ln, f = label[v], label[nbr], foreign[nbr]
            before = int(foreign[v] > 0) + np.count_nonzero(f > 0)
            best_gain, best_part = 0, -1
            for target in np.unique(ln):
                if target == own or size[target] >= n_max:
                    continue
                after = int(np.any(ln != target)) + np.count_nonzero(f + (ln == own) - (ln == target) > 0)
                if before - after > best_gain:
                    best_gain, best_part = before - after, target
            if best_part >= 0:
                foreign[nbr] += (ln == own).astype(int) - (ln == best_part)
                foreign[v] = np.count_nonzero(ln != best_part)
                label[v] = best_part
                size[own] -= 1
                size[best_part] += 1
                moved = True
    return label


def boundary_partition(graph: WeightedGraph, n_max: int, rng: np.random.Generator) -> Partition:
    """networkx Louvain communities (signed weights, seed from rng), boundary-reducing single-node moves,
    then split_large and merge_small as in the modularity policy."""
    _check(graph, n_max)
    if graph.n <= n_max:
        return [np.arange(graph.n)]
    seed = int(rng.integers(2**31))
    communities = _communities(nx.community.louvain_communities, to_networkx(graph), seed=seed)
    label = np.empty(graph.n, dtype=int)
    for a, c in enumerate(communities):
        label[list(c)] = a
    label = reduce_boundary(graph, label, n_max, rng)
    parts = _as_parts(np.flatnonzero(label == a) for a in range(label.max() + 1))
    return merge_small(graph, split_large(parts, n_max, rng), n_max, rng)


def kl_partition(graph: WeightedGraph, n_max: int, rng: np.random.Generator) -> Partition:
    """Recursive networkx Kernighan-Lin bisection with |w| weights (seeded from rng) until every part has
    <= n_max nodes."""
    _check(graph, n_max)
    g = to_networkx(graph)
    done: Partition = []
    todo = [np.arange(graph.n)]
    while todo:
        part = todo.pop()
        if len(part) <= n_max:
            done.append(np.sort(part))
            continue
        halves = nx.community.kernighan_lin_bisection(g.subgraph(part.tolist()), weight="absw",
                                                      seed=int(rng.integers(2**31)))
        todo.extend(_as_parts(halves))
    return done


def modularity_of(graph: WeightedGraph, parts: Partition) -> float:
    """networkx modularity of `parts` in the unweighted graph (the quantity the modularity policy
    maximises); nan for a graph without edges (undefined)."""
    if len(graph.edges) == 0:
        return float("nan")
    return float(nx.community.modularity(to_networkx(graph), [set(p.tolist()) for p in parts], weight=None))


def intra_weight_share(graph: WeightedGraph, parts: Partition) -> float:
    """Share of the total |w| on edges inside parts: what KL maximises, a baseline predictor of rho
    (a subgraph solved exactly keeps its edges' best cut; cross edges are left to coarser levels)."""
    label = np.empty(graph.n, dtype=int)
    for a, part in enumerate(parts):
        label[part] = a
    absw = np.abs(graph.weights)
    inside = label[graph.edges[:, 0]] == label[graph.edges[:, 1]]
    return float(absw[inside].sum() / absw.sum()) if absw.sum() > 0 else float("nan")


def perturbed(partition: Callable[[WeightedGraph, int, np.random.Generator], Partition],
              max_fraction: float = 0.3) -> Callable[[WeightedGraph, int, np.random.Generator], Partition]:
    """`partition` followed by s random swaps of two nodes' parts, s uniform in 1..max(1, max_fraction*n/2):
    partitions near a good one (part sizes kept), so that the critic's data covers the region where the
    strong heuristics land and not only random partitions."""
    def policy(graph: WeightedGraph, n_max: int, rng: np.random.Generator) -> Partition:
        parts = partition(graph, n_max, rng)
        if len(parts) < 2:
            return parts
        label = np.empty(graph.n, dtype=int)
        for a, part in enumerate(parts):
            label[part] = a
        for _ in range(1 + int(rng.integers(max(1, round(max_fraction * graph.n / 2))))):
            u, v = rng.choice(graph.n, size=2, replace=False)
            label[u], label[v] = label[v], label[u]
        return _as_parts(np.flatnonzero(label == a) for a in range(len(parts)))

    return policy


POLICIES: dict[str, Callable[[WeightedGraph, int, np.random.Generator], Partition]] = {
    "random": random_partition,
    "modularity": modularity_partition,
    "boundary": boundary_partition,
    "kl": kl_partition,
}
# Partitions that only make critic data (the level-0 mix of the solve stage), never a compared policy.
SAMPLING_POLICIES = POLICIES | {"kl_perturbed": perturbed(kl_partition), "boundary_perturbed": perturbed(boundary_partition)}
