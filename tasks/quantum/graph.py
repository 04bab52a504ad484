"""Weighted graphs for MaxCut (spec §2): the one type every QAOA^2 piece shares."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class WeightedGraph:
    """n nodes 0..n-1; edges (m, 2) int with u < v, no duplicates, no self-loops; weights (m,)
    float (may be negative)."""

    n: int
    edges: np.ndarray
    weights: np.ndarray

    def cut(self, sides: np.ndarray) -> float:
        """Cut value of a 0/1 assignment: the total weight of edges whose ends differ."""
        sides = np.asarray(sides)
        return float(np.sum(self.weights[sides[self.edges[:, 0]] != sides[self.edges[:, 1]]]))

    @property
    def sum_negative(self) -> float:
        """SumNeg = sum of the negative weights (the offset of the performance ratio)."""
        return float(np.sum(self.weights[self.weights < 0]))

    def subgraph(self, nodes: np.ndarray) -> WeightedGraph:
        """The induced subgraph on `nodes`, relabelled 0..len(nodes)-1 in the given order."""
        nodes = np.asarray(nodes)
        index = np.full(self.n, -1)
        index[nodes] = np.arange(len(nodes))
        keep = (index[self.edges[:, 0]] >= 0) & (index[self.edges[:, 1]] >= 0)
        edges = np.sort(index[self.edges[keep]], axis=1)
        return WeightedGraph(len(nodes), edges, self.weights[keep])


def performance_ratio(cut: float, optimum: float, sum_negative: float) -> float:
    """rho = (Cut - SumNeg) / (OPT - SumNeg)."""
    return (cut - sum_negative) / (optimum - sum_negative)
