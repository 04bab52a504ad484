"""The Hermitian DQ measurement matrix C = C_s + eps C_d (spec §3.2).

C is stored in its real representation: two sparse real 4n x 4n matrices whose (i, j) blocks
are L((C_s)_ij) and L((C_d)_ij), so C x costs three sparse mat-vecs.
"""
from __future__ import annotations

import numpy as np
from scipy.sparse import bsr_matrix, coo_matrix, csr_matrix
from scipy.sparse.csgraph import breadth_first_order

from tasks.sync.dualquat import dq_from_matrix
from tasks.sync.graph import PoseGraph
from tasks.sync.quaternion import qconj, qleft, qmul


def _pair_keys(n: int, edges: np.ndarray) -> np.ndarray:
    """One integer per unordered node pair: min * n + max."""
    return np.min(edges, axis=1) * n + np.max(edges, axis=1)


def check_edges(n: int, edges: np.ndarray) -> np.ndarray:
    """Edges as an (m, 2) int array; raises ValueError naming bad ones.

    Self-loops and repeated node pairs (also (i, j) next to (j, i)) are rejected rather than
    deduplicated: two different measurements of one pair have no single right block of C.
    """
    edges = np.asarray(edges)
    if edges.size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    if edges.ndim != 2 or edges.shape[1] != 2 or not np.issubdtype(edges.dtype, np.integer):
        raise ValueError(f"edges must be an (m, 2) integer array, got {edges.dtype} {edges.shape}")
    edges = edges.astype(np.int64)
    out_of_range = np.flatnonzero((edges < 0).any(axis=1) | (edges >= n).any(axis=1))
    if out_of_range.size:
        raise ValueError(f"edges {edges[out_of_range[:5]].tolist()} name nodes outside 0..{n - 1}")
    loops = np.flatnonzero(edges[:, 0] == edges[:, 1])
    if loops.size:
        raise ValueError(f"self-loops are not allowed: {edges[loops[:5]].tolist()}")
    keys = np.sort(_pair_keys(n, edges))
    repeated = np.unique(keys[1:][keys[1:] == keys[:-1]])
    if repeated.size:
        pairs = np.column_stack([repeated // n, repeated % n])
        raise ValueError(f"node pairs measured more than once: {pairs[:5].tolist()}")
    return edges


def bfs_tree(
    n: int, edges: np.ndarray, root: int = 0, *, checked: bool = False
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """A BFS spanning tree from root, one tuple per depth: (child, parent, edge, forward).

    edge is the row of `edges` joining parent and child; forward is True where that row is stored
    as (parent, child). Nodes in other components are absent. Whole levels come at once, so
    propagating poses along the tree is vectorized per level. checked=True: the caller has already
    passed `edges` through check_edges (the methods validate once, outside their timed region).
    """
    edges = np.asarray(edges, dtype=np.int64) if checked else check_edges(n, edges)
    adjacency = coo_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(n, n)).tocsr()
    order, predecessor = breadth_first_order(adjacency, root, directed=False, return_predecessors=True)
    child = order[1:]
    parent = predecessor[child]
    depth, parent_of = [0] * n, predecessor.tolist()
    for node in child.tolist():  # BFS order: a parent's depth is known before its children's
        depth[node] = depth[parent_of[node]] + 1
    depth = np.array(depth)[child]
    keys = _pair_keys(n, edges)
    sorter = np.argsort(keys)
    edge = sorter[np.searchsorted(keys, _pair_keys(n, np.column_stack([parent, child])), sorter=sorter)]
    forward = edges[edge, 0] == parent
    return [
        (child[at], parent[at], edge[at], forward[at])
        for at in (np.flatnonzero(depth == level) for level in range(1, int(depth.max(initial=0)) + 1))
    ]


def measurement_dqs(graph: PoseGraph, *, checked: bool = False) -> np.ndarray:
    """Measured DQs (m, 8) for graph.edges with mutually consistent signs.

    Uses graph.dq when set (the additive model, not unit), else the UDQs of graph.Z. Sign fix:
    y_0 = 1 and, along a BFS tree from node 0, y_j = z_ij* y_i (z_ji y_i for an edge stored the
    other way round); then every z_ij with <s(z_ij), s(y_i y_j*)> < 0 is negated. Only standard
    parts decide signs, so y is kept as unit quaternions, each with w >= 0: any per-node sign is a
    valid gauge, and fixing it makes the output independent of the input signs, bit for bit.
    checked=True: graph.edges already passed check_edges.
    """
    edges = np.asarray(graph.edges, dtype=np.int64) if checked else check_edges(graph.n, graph.edges)
    z = np.array(graph.dq, dtype=float) if graph.dq is not None else dq_from_matrix(graph.Z)
    if z.shape != (len(edges), 8):
        raise ValueError(f"need one 8-vector DQ per edge, got {z.shape} for {len(edges)} edges")
    y = np.zeros((graph.n, 4))
    y[0, 0] = 1.0
    reached = 1
    for child, parent, edge, forward in bfs_tree(graph.n, edges, 0, checked=True):
        step = np.where(forward[:, None], qconj(z[edge, :4]), z[edge, :4])
        y_child = qmul(step, y[parent])
        y_child /= np.linalg.norm(y_child, axis=1, keepdims=True)
        y[child] = np.where(y_child[:, :1] < 0, -y_child, y_child)
        reached += len(child)
    if reached < graph.n:
        raise ValueError(f"graph is disconnected: node 0 reaches {reached} of {graph.n} nodes")
    relative = qmul(y[edges[:, 0]], qconj(y[edges[:, 1]]))
    flip = np.sum(z[:, :4] * relative, axis=1) < 0
    z[flip] *= -1.0
    return z


def align_node_signs(x: np.ndarray, edges: np.ndarray, dqs: np.ndarray) -> np.ndarray:
    """x (n, 8) with each node's sign (x_i and -x_i are one pose) made consistent with dqs.

    C x is not invariant to per-node signs: a start whose signs disagree with the measurement
    signs cancels terms of C x. Along the BFS tree from node 0, x_j is negated where
    <s(z_ij), s(x_i x_j*)> < 0, with z_ij the tree edge's measurement oriented i -> j.
    """
    x = np.array(x, dtype=float)
    for child, parent, edge, forward in bfs_tree(len(x), edges, 0):
        z = np.where(forward[:, None], dqs[edge, :4], qconj(dqs[edge, :4]))
        relative = qmul(x[parent, :4], qconj(x[child, :4]))
        flip = np.sum(z * relative, axis=1) < 0
        x[child[flip]] *= -1.0
    return x


def block_matrix(n: int, rows: np.ndarray, cols: np.ndarray, blocks: np.ndarray) -> csr_matrix:
    """Sparse 4n x 4n CSR matrix with blocks[k] (4 x 4) at block position (rows[k], cols[k]).

    Built in one vectorized step (block-sorted BSR, then CSR); positions must be distinct.
    """
    rows, cols = np.asarray(rows), np.asarray(cols)
    order = np.lexsort((cols, rows))
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n))])
    blocks = np.ascontiguousarray(np.asarray(blocks, dtype=float)[order])
    return bsr_matrix((blocks, cols[order], indptr), shape=(4 * n, 4 * n)).tocsr()


def build_measurement_matrix(
    n: int, edges: np.ndarray, dqs: np.ndarray
) -> tuple[csr_matrix, csr_matrix]:
    """Real representation (C_s, C_d) of the Hermitian DQ matrix C.

    C_ii = 1 (once), C_ij = dqs[k] for edges[k] = (i, j), C_ji = C_ij*, all other blocks 0, no
    weights. Because L(q*) = L(q)^T, both real matrices are symmetric. Self-loops and repeated
    pairs raise ValueError (see check_edges).
    """
    edges = check_edges(n, edges)
    dqs = np.asarray(dqs, dtype=float)
    if dqs.shape != (len(edges), 8):
        raise ValueError(f"need one 8-vector DQ per edge, got {dqs.shape} for {len(edges)} edges")
    i, j = edges[:, 0], edges[:, 1]
    nodes = np.arange(n)
    L_s, L_d = qleft(dqs[:, :4]), qleft(dqs[:, 4:])
    C_s = block_matrix(
        n,
        np.concatenate([i, j, nodes]),
        np.concatenate([j, i, nodes]),
        np.concatenate([L_s, L_s.swapaxes(1, 2), np.broadcast_to(np.eye(4), (n, 4, 4))]),
    )
    C_d = block_matrix(
        n, np.concatenate([i, j]), np.concatenate([j, i]), np.concatenate([L_d, L_d.swapaxes(1, 2)])
    )
    return C_s, C_d


def dq_matvec(C_s: csr_matrix, C_d: csr_matrix, x: np.ndarray) -> np.ndarray:
    """C x for a stacked DQ vector x (n, 8): (C_s x_s) + eps (C_s x_d + C_d x_s)."""
    n = len(x)
    s, d = x[:, :4].reshape(-1), x[:, 4:].reshape(-1)
    return np.concatenate([(C_s @ s).reshape(n, 4), (C_s @ d + C_d @ s).reshape(n, 4)], axis=1)
