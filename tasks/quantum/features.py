"""Graph encoding shared by the critic and the generator (spec §3.3).

Every graph the neural policy sees, coarse graphs included, becomes a `GraphTensors`: five
z-scored structural features per node and both directions of every edge with the attribute
w̃ = w / max|w|.
"""
from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np
import torch

from tasks.quantum.graph import WeightedGraph

N_FEATURES = 5


def node_features(graph: WeightedGraph) -> np.ndarray:
    """(n, 5) float32: degree, signed weighted degree, clustering (|w|), PageRank (|w|) and
    betweenness (|w| as edge length), each z-scored within the graph as (f - mean)/(std + 1e-6)."""
    n = graph.n
    u, v = graph.edges[:, 0], graph.edges[:, 1]
    w = np.asarray(graph.weights, dtype=float)
    degree = np.bincount(u, minlength=n) + np.bincount(v, minlength=n)
    weighted_degree = np.bincount(u, w, minlength=n) + np.bincount(v, w, minlength=n)

    g = nx.Graph()
    g.add_nodes_from(range(n))
    g.add_weighted_edges_from(zip(u.tolist(), v.tolist(), np.abs(w).tolist()))
    clustering = nx.clustering(g, weight="weight")
    try:
        pagerank = nx.pagerank(g, weight="weight")
    except nx.PowerIterationFailedConvergence:
        pagerank = {i: 1.0 / n for i in range(n)}
    betweenness = nx.betweenness_centrality(g, weight="weight")

    columns = [degree, weighted_degree,
               [clustering[i] for i in range(n)], [pagerank[i] for i in range(n)], [betweenness[i] for i in range(n)]]
    f = np.stack([np.asarray(c, dtype=float) for c in columns], axis=1)  # (n, 5)
    return ((f - f.mean(axis=0)) / (f.std(axis=0) + 1e-6)).astype(np.float32)


@dataclass(frozen=True)
class GraphTensors:
    """x (n, 5) node features; edge_index (2, 2m) long, row 0 source, row 1 target, the m edges
    u->v followed by the same m edges v->u; edge_attr (2m,) w / max|w|."""

    x: torch.Tensor
    edge_index: torch.Tensor
    edge_attr: torch.Tensor
    n: int


def to_tensors(graph: WeightedGraph) -> GraphTensors:
    """The network input of one graph (features and both edge directions)."""
    edges = torch.as_tensor(np.asarray(graph.edges, dtype=np.int64).reshape(-1, 2))
    w = np.asarray(graph.weights, dtype=float)
    scale = float(np.max(np.abs(w))) if w.size and np.max(np.abs(w)) > 0 else 1.0
    w_tilde = torch.as_tensor(w / scale, dtype=torch.float32)
    edge_index = torch.cat([edges.T, edges.T.flip(0)], dim=1)  # (2, 2m)
    return GraphTensors(x=torch.from_numpy(node_features(graph)), edge_index=edge_index,
                        edge_attr=torch.cat([w_tilde, w_tilde]), n=graph.n)
