"""MaxCut instances (spec §6): synthetic Biq Mac-like families, graph files, reference OPT.

Families (each `generator(n_or_L, rng)`, deterministic for a seed):
  g05_n   G(n, 0.5), w = 1            pm1s_n  G(n, 0.1), w = ±1
  w05_n   G(n, 0.5), w ∈ {−10..10}\\{0}  pw05_n  G(n, 0.5), w ∈ {1..10}
  bqp_n   QUBO, density 0.1, integer entries U[−100, 100] -> MaxCut on n + 1 nodes
  t2g_L   L × L torus, w = round(1e5·N(0, 1))
Files: Biq Mac style "n m" then "u v w" (1-based) for `write_graph`/`read_biqmac`; a plain
0-based "u v w" edge list for `read_edge_list`; a whitespace matrix for `read_qubo`.
Reference OPT helpers: exact brute force for n ≤ 22 (the tests' ground truth), random-restart one-flip
searches (the start handed to SCIP, exact.py, which gives the pipeline's references).
Readers refuse (GraphFormatError, an InputError) binary or oversized files, node ids and matrix sizes
above MAX_NODES / MAX_QUBO_VARIABLES before allocating anything, more than MAX_EDGES edges, and
weights that are not finite or exceed MAX_ABS_WEIGHT in magnitude (their sums would overflow).
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from tasks.core.inputs import INTEGER, InputError, read_text
from tasks.quantum.graph import WeightedGraph
from tasks.quantum.qubo import qubo_to_maxcut

BRUTE_FORCE_MAX_N = 22
_CHUNK = 1 << 15
MAX_NODES = 10_000  # partitions keep (parts x parts) dense matrices, so n^2 floats must fit
MAX_EDGES = 1_000_000
MAX_QUBO_VARIABLES = 1_000  # a dense QUBO of n variables is a graph of ~n^2/2 edges
MAX_ABS_WEIGHT = 1e12  # cut values sum up to MAX_EDGES weights: far from float overflow
MAX_GRAPH_BYTES = 64 * 2**20

Seed = np.random.Generator | int | None


class GraphFormatError(InputError):
    """A graph or QUBO file that cannot be read; the message names the file and the 1-based line."""


# --------------------------------------------------------------------------- generators

def _rng(rng: Seed) -> np.random.Generator:
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


def _check_size(name: str, value: int, minimum: int) -> int:
    if int(value) != value or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _make_graph(n: int, edges: np.ndarray, weights: np.ndarray) -> WeightedGraph:
    """Edges as (u < v) rows in lexicographic order, weights as float."""
    edges = np.sort(np.asarray(edges, dtype=int).reshape(-1, 2), axis=1)
    order = np.lexsort((edges[:, 1], edges[:, 0]))
    return WeightedGraph(n, edges[order], np.asarray(weights, dtype=float).reshape(-1)[order])


def _gnp_edges(n: int, p: float, rng: np.random.Generator) -> np.ndarray:
    iu, ju = np.triu_indices(n, 1)
    keep = rng.random(iu.size) < p
    return np.stack([iu[keep], ju[keep]], axis=1)


def g05(n: int, rng: Seed = None) -> WeightedGraph:
    """G(n, 0.5) with unit weights."""
    n, rng = _check_size("n", n, 1), _rng(rng)
    edges = _gnp_edges(n, 0.5, rng)
    return _make_graph(n, edges, np.ones(len(edges)))


def pm1s(n: int, rng: Seed = None) -> WeightedGraph:
    """G(n, 0.1) with weights ±1 equally likely."""
    n, rng = _check_size("n", n, 1), _rng(rng)
    edges = _gnp_edges(n, 0.1, rng)
    return _make_graph(n, edges, rng.choice([-1.0, 1.0], size=len(edges)))


def w05(n: int, rng: Seed = None) -> WeightedGraph:
    """G(n, 0.5) with weights uniform in {−10..10} \\ {0}."""
    n, rng = _check_size("n", n, 1), _rng(rng)
    edges = _gnp_edges(n, 0.5, rng)
    weights = rng.integers(1, 11, size=len(edges)) * rng.choice([-1, 1], size=len(edges))
    return _make_graph(n, edges, weights)


def pw05(n: int, rng: Seed = None) -> WeightedGraph:
    """G(n, 0.5) with weights uniform in {1..10}."""
    n, rng = _check_size("n", n, 1), _rng(rng)
    edges = _gnp_edges(n, 0.5, rng)
    return _make_graph(n, edges, rng.integers(1, 11, size=len(edges)))


def bqp_matrix(n: int, rng: Seed = None) -> np.ndarray:
    """(n, n) symmetric integer QUBO: each entry on or above the diagonal is nonzero-drawn with
    probability 0.1, from U{−100..100}, and mirrored."""
    n, rng = _check_size("n", n, 1), _rng(rng)
    iu, ju = np.triu_indices(n)
    keep = rng.random(iu.size) < 0.1
    values = rng.integers(-100, 101, size=int(keep.sum()))
    Q = np.zeros((n, n))
    Q[iu[keep], ju[keep]] = values
    Q[ju[keep], iu[keep]] = values
    return Q


def bqp(n: int, rng: Seed = None) -> WeightedGraph:
    """`bqp_matrix(n)` reduced to MaxCut on n + 1 nodes (qubo_to_maxcut)."""
    return qubo_to_maxcut(bqp_matrix(n, rng))


def t2g(L: int, rng: Seed = None) -> WeightedGraph:
    """L × L 2-D torus (node i·L + j), weights round(1e5·N(0, 1)); L >= 3 so no edge repeats."""
    L, rng = _check_size("L", L, 3), _rng(rng)
    node = np.arange(L * L).reshape(L, L)
    right = np.stack([node.ravel(), np.roll(node, -1, axis=1).ravel()], axis=1)
    down = np.stack([node.ravel(), np.roll(node, -1, axis=0).ravel()], axis=1)
    edges = np.concatenate([right, down])
    return _make_graph(L * L, edges, np.round(1e5 * rng.standard_normal(len(edges))))


FAMILIES: dict[str, Callable[[int, Seed], WeightedGraph]] = {
    "g05": g05, "pm1s": pm1s, "w05": w05, "pw05": pw05, "bqp": bqp, "t2g": t2g,
}


# --------------------------------------------------------------------------- files

def _format_weight(w: float) -> str:
    return str(int(w)) if float(w).is_integer() else repr(float(w))


def write_graph(path: str | Path, graph: WeightedGraph) -> None:
    """Biq Mac style: "n m", then one "u v w" line per edge with 1-based nodes."""
    lines = [f"{graph.n} {len(graph.edges)}"]
    lines += [f"{u + 1} {v + 1} {_format_weight(w)}" for (u, v), w in zip(graph.edges, graph.weights)]
    Path(path).write_text("\n".join(lines) + "\n")


def _content_lines(path: Path, what: str = "graph file") -> list[tuple[int, list[str]]]:
    """(1-based line number, tokens) for every line that is neither blank nor a # comment."""
    out = []
    for number, line in enumerate(read_text(path, what, MAX_GRAPH_BYTES).splitlines(), start=1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            out.append((number, stripped.split()))
    return out


def _clip(text: str, limit: int = 60) -> str:
    """`text` for an error message: a minified or binary-ish line is cut, not printed whole."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def _parse_int(path: Path, number: int, token: str, what: str) -> int:
    """A plain decimal integer: int() alone also takes "1_000" and non-ASCII digits, which the format does not."""
    if not INTEGER.fullmatch(token):
        raise GraphFormatError(f"{path}:{number}: {what} must be an integer (decimal digits only), got {_clip(token)!r}")
    if len(token) > MAX_INT_DIGITS:  # no count or node id here comes near it; int() would refuse past 4,300 digits
        raise GraphFormatError(f"{path}:{number}: {what} {_clip(token)} is out of range (over {MAX_INT_DIGITS} digits)")
    return int(token)


MAX_INT_DIGITS = 18


def _parse_float(path: Path, number: int, token: str, what: str) -> float:
    try:
        if "_" in token or not token.isascii():  # float() takes "1_0.5" and non-ASCII digits, which the format does not
            raise ValueError(token)
        value = float(token)
    except ValueError:
        raise GraphFormatError(f"{path}:{number}: {what} must be a number, got {_clip(token)!r}") from None
    if not np.isfinite(value):
        raise GraphFormatError(f"{path}:{number}: {what} must be finite, got {_clip(token)!r}")
    if abs(value) > MAX_ABS_WEIGHT:
        raise GraphFormatError(f"{path}:{number}: {what} must be at most {MAX_ABS_WEIGHT:g} in magnitude, got {_clip(token)} "
                               "(rescale the values)")
    return value


def _parse_edges(path: Path, lines: list[tuple[int, list[str]]], base: int,
                 n: int | None, max_nodes: int = MAX_NODES) -> tuple[np.ndarray, np.ndarray]:
    """Edge lines "u v w" with `base`-based nodes -> 0-based (u < v) edges and weights.
    Self-loops, nodes out of range (or at or above `max_nodes`), repeated edges (either
    orientation) and more than MAX_EDGES lines are errors."""
    if len(lines) > MAX_EDGES:
        raise GraphFormatError(f"{path}: {len(lines):,} edge lines is over the limit of {MAX_EDGES:,} edges")
    seen: dict[tuple[int, int], int] = {}
    edges, weights = [], []
    for number, tokens in lines:
        if len(tokens) != 3:
            raise GraphFormatError(f"{path}:{number}: expected 3 fields 'u v w', got {len(tokens)}: {_clip(' '.join(tokens))!r}")
        u = _parse_int(path, number, tokens[0], "node u") - base
        v = _parse_int(path, number, tokens[1], "node v") - base
        w = _parse_float(path, number, tokens[2], "weight w")
        for node, token in ((u, tokens[0]), (v, tokens[1])):
            if node < 0 or (n is not None and node >= n):
                allowed = f"{base}..{n - 1 + base}" if n is not None else f">= {base}"
                raise GraphFormatError(f"{path}:{number}: node {_clip(token)} out of range (nodes are {allowed})")
            if node >= max_nodes:
                raise GraphFormatError(f"{path}:{number}: node {_clip(token)} is over the limit of {max_nodes:,} nodes "
                                       f"(ids {base}..{max_nodes - 1 + base})")
        if u == v:
            raise GraphFormatError(f"{path}:{number}: self-loop on node {tokens[0]}")
        key = (min(u, v), max(u, v))
        if key in seen:
            raise GraphFormatError(f"{path}:{number}: edge {tokens[0]} {tokens[1]} repeats the edge of line {seen[key]}")
        seen[key] = number
        edges.append(key)
        weights.append(w)
    return np.asarray(edges, dtype=int).reshape(-1, 2), np.asarray(weights, dtype=float)


def read_edge_list(path: str | Path, n: int | None = None, max_nodes: int = MAX_NODES) -> WeightedGraph:
    """A user graph: one "u v w" per line, 0-based nodes below `max_nodes`; blank and # lines ignored.
    n defaults to the largest node + 1 (pass it to keep trailing isolated nodes)."""
    path = Path(path)
    if n is not None and n > max_nodes:
        raise GraphFormatError(f"{path}: n = {n:,} nodes is over the limit of {max_nodes:,}")
    edges, weights = _parse_edges(path, _content_lines(path), 0, n, max_nodes)
    if n is None:
        if len(edges) == 0:
            raise GraphFormatError(f"{path}: no edges (expected one 'u v w' line per edge), so the number of "
                                   "nodes is unknown")
        n = int(edges.max()) + 1
    return _make_graph(n, edges, weights)


def read_biqmac(path: str | Path, max_nodes: int = MAX_NODES) -> WeightedGraph:
    """A Biq Mac / rudy file: header "n m" (n <= max_nodes), then m lines "u v w" with 1-based nodes."""
    path = Path(path)
    lines = _content_lines(path)
    if not lines:
        raise GraphFormatError(f"{path}: empty file, expected a header 'n m'")
    number, header = lines[0]
    if len(header) != 2:
        raise GraphFormatError(f"{path}:{number}: header must be 'n m', got {_clip(' '.join(header))!r}")
    n = _parse_int(path, number, header[0], "node count n")
    m = _parse_int(path, number, header[1], "edge count m")
    if n < 1 or m < 0:
        raise GraphFormatError(f"{path}:{number}: header needs n >= 1 and m >= 0, got n={n} m={m}")
    if n > max_nodes:
        raise GraphFormatError(f"{path}:{number}: n = {n:,} nodes is over the limit of {max_nodes:,}")
    if len(lines) - 1 != m:
        raise GraphFormatError(f"{path}:{number}: header says m={m} edges, the file has {len(lines) - 1} edge lines")
    edges, weights = _parse_edges(path, lines[1:], 1, n, max_nodes)
    return _make_graph(n, edges, weights)


def read_qubo(path: str | Path, max_variables: int = MAX_QUBO_VARIABLES) -> np.ndarray:
    """A QUBO matrix Q: one whitespace-separated row per line (blank and # lines ignored), square,
    at most `max_variables` rows."""
    path = Path(path)
    lines = _content_lines(path, "QUBO file")
    if not lines:
        raise GraphFormatError(f"{path}: empty file, expected a square matrix")
    size = len(lines)
    if size > max_variables:
        raise GraphFormatError(f"{path}: {size:,} rows is over the limit of {max_variables:,} variables")
    rows = []
    for number, tokens in lines:
        if len(tokens) != size:
            raise GraphFormatError(f"{path}:{number}: a {size}x{size} matrix needs {size} entries per row, got {len(tokens)}")
        rows.append([_parse_float(path, number, token, f"entry {col + 1}") for col, token in enumerate(tokens)])
    return np.asarray(rows, dtype=float)


# --------------------------------------------------------------------------- reference OPT

def brute_force_maxcut(graph: WeightedGraph) -> tuple[float, np.ndarray]:
    """Exact MaxCut for n ≤ 22: every assignment with node n−1 on side 0 (Z2 symmetry), in chunks
    of 2^15 rows. Cut = W/2 − ¼ sᵀAs with spins s. Returns (OPT, sides)."""
    n = graph.n
    if not 1 <= n <= BRUTE_FORCE_MAX_N:
        raise ValueError(f"brute force needs 1 <= n <= {BRUTE_FORCE_MAX_N}, got n={n}")
    if len(graph.edges) == 0:
        return 0.0, np.zeros(n, dtype=int)
    A = np.zeros((n, n))
    np.add.at(A, (graph.edges[:, 0], graph.edges[:, 1]), graph.weights)
    A = A + A.T
    total = float(np.sum(graph.weights))
    best_value, best_index = -np.inf, 0
    shifts = np.arange(n)
    for start in range(0, 1 << (n - 1), _CHUNK):
        index = np.arange(start, min(start + _CHUNK, 1 << (n - 1)))
        spins = 1.0 - 2.0 * ((index[:, None] >> shifts) & 1)  # (chunk, n)
        cuts = total / 2 - 0.25 * np.einsum("ij,ij->i", spins @ A, spins)
        k = int(np.argmax(cuts))
        if cuts[k] > best_value:
            best_value, best_index = float(cuts[k]), int(index[k])
    sides = (best_index >> shifts) & 1
    return graph.cut(sides), sides


def local_search_maxcut(graph: WeightedGraph, restarts: int = 50, rng: Seed = None) -> tuple[float, np.ndarray]:
    """Best of `restarts` one-flip local searches from uniform random sides: flip the node of largest
    positive gain until none is left. Returns (best cut, sides)."""
    restarts = _check_size("restarts", restarts, 1)
    rng = _rng(rng)
    n = graph.n
    A = np.zeros((n, n))
    np.add.at(A, (graph.edges[:, 0], graph.edges[:, 1]), graph.weights)
    A = A + A.T
    tolerance = 1e-9 * max(1.0, float(np.max(np.abs(graph.weights), initial=0.0)))
    best_cut, best_sides = -np.inf, np.zeros(n, dtype=int)
    for _ in range(restarts):
        spins = rng.choice([-1.0, 1.0], size=n)
        gain = spins * (A @ spins)  # cut change of flipping node i: Σ_j w_ij [same side] − [other side]
        while True:
            i = int(np.argmax(gain))
            if gain[i] <= tolerance:
                break
            old = spins[i]
            gain -= 2.0 * spins * A[:, i] * old
            gain[i] = -gain[i]
            spins[i] = -old
        sides = (spins < 0).astype(int)
        cut = graph.cut(sides)
        if cut > best_cut:
            best_cut, best_sides = cut, sides
    return best_cut, best_sides
