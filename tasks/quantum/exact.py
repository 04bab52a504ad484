"""Reference optima of MaxCut by SCIP (pyscipopt): a proved optimum where SCIP closes the gap within its
node limit, else its best cut and dual bound.

Formulation: x_i in {0, 1} (x of the last node fixed to 0, the Z2 symmetry), one continuous
y_uv in [0, 1] per edge with all four XOR constraints y <= x_u + x_v, y <= 2 - x_u - x_v, y >= x_u - x_v,
y >= x_v - x_u, so y is the cut vector at every integer x and the objective sum w_uv y_uv is the cut.
That LP relaxation alone is weak (x = 1/2 lets every y reach 1: the bound is the sum of the positive
weights), so a separator adds odd-cycle inequalities (Barahona and Mahjoub): for a cycle C of the graph
and an odd subset F of its edges, sum_F (1 - y) + sum_{C minus F} y >= 1, valid for every cut vector.
They make the LP bound tight enough on sparse signed graphs (n = 100, density 0.1) for SCIP to prove
the optimum within a few hundred nodes, where the plain formulation leaves gaps of 50% after 1,000.
A known cut (local search) is handed to SCIP as a start, so its answer is never worse than that.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from pyscipopt import SCIP_RESULT, Model, Sepa, quicksum
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import dijkstra

from tasks.quantum.graph import WeightedGraph


@dataclass(frozen=True)
class MaxCutSolve:
    """cut: best cut found (= graph.cut(sides)); bound: SCIP's upper bound on the optimum; proved:
    SCIP closed the gap (status 'optimal'); gap = (bound - cut) / max(|cut|, 1); status: SCIP's ('optimal',
    'nodelimit', 'timelimit'); nodes: branch-and-bound nodes; time_s: SCIP's solve time."""

    cut: float
    sides: np.ndarray
    bound: float
    proved: bool
    gap: float
    status: str
    nodes: int
    time_s: float


MAX_CUTS_PER_ROUND = 100  # the most violated odd cycles a separation round adds
VIOLATION = 1e-6  # a cycle's left side below 1 - VIOLATION is cut off


def odd_cycles(n: int, edges: np.ndarray, y: np.ndarray) -> list[tuple[list[int], list[int]]]:
    """Odd-cycle inequalities violated by the edge values `y`, most violated first: (edges in C minus F, edges in F)
    as edge indices, from shortest paths between the two copies of a node in the doubled graph (an edge of C minus F
    keeps the copy and costs y, one of F switches it and costs 1 - y); a path shorter than 1 is a violated cycle.
    Paths that visit a node twice are skipped (a shorter cycle inside them is found from its own nodes)."""
    y = np.clip(y, 0.0, 1.0)
    u, v = edges[:, 0], edges[:, 1]
    tiny = 1e-9  # csgraph drops explicit zeros: a zero-length edge would vanish
    rows = np.concatenate([u, u + n, u, u + n])
    cols = np.concatenate([v, v + n, v + n, v])
    lengths = np.concatenate([y, y, 1 - y, 1 - y]) + tiny
    doubled = coo_matrix((lengths, (rows, cols)), shape=(2 * n, 2 * n)).tocsr()
    distance, previous = dijkstra(doubled, directed=False, indices=np.arange(n), return_predecessors=True)
    index = {(a, b): e for e, (a, b) in enumerate(edges.tolist())}
    found, seen = [], set()
    for node in np.argsort(distance[np.arange(n), np.arange(n) + n]):
        if distance[node, node + n] >= 1 - VIOLATION or len(found) == MAX_CUTS_PER_ROUND:
            break
        path, at = [int(node) + n], int(node) + n
        while at != node:
            at = int(previous[node, at])
            path.append(at)
        originals = [p % n for p in path]
        if len(set(originals)) != len(originals) - 1:
            continue
        kept, switched = [], []
        for a, b in zip(path, path[1:]):
            edge = index[min(a % n, b % n), max(a % n, b % n)]
            (switched if (a >= n) != (b >= n) else kept).append(edge)
        key = frozenset(kept + switched)
        if key not in seen:
            seen.add(key)
            found.append((kept, switched))
    return found


class OddCycleSeparator(Sepa):
    """Adds the odd-cycle inequalities that the current LP solution violates (global cuts)."""

    def __init__(self, n: int, edges: np.ndarray, y: list):
        self.n, self.edges, self.y = n, edges, y

    def sepaexeclp(self):
        values = np.array([self.model.getSolVal(None, ye) for ye in self.y])
        cycles = odd_cycles(self.n, self.edges, values)
        for kept, switched in cycles:
            # sum_kept y - sum_switched y >= 1 - |switched|
            row = self.model.createEmptyRowSepa(self, "oddcycle", lhs=1.0 - len(switched), rhs=None, local=False)
            self.model.cacheRowExtensions(row)
            for e in kept:
                self.model.addVarToRow(row, self.y[e], 1.0)
            for e in switched:
                self.model.addVarToRow(row, self.y[e], -1.0)
            self.model.flushRowExtensions(row)
            self.model.addCut(row)
            self.model.releaseRow(row)
        return {"result": SCIP_RESULT.SEPARATED if cycles else SCIP_RESULT.DIDNOTFIND}


def scip_maxcut(graph: WeightedGraph, *, node_limit: int, time_limit: float, start: np.ndarray | None = None,
                seed: int = 0) -> MaxCutSolve:
    """Maximum cut of `graph` by SCIP on one thread, with odd-cycle cuts, within `node_limit` branch-and-bound nodes
    (the budget: deterministic, so the same graph gets the same answer on any machine) and `time_limit` seconds of
    CPU time (a safety net that the load of other processes does not move; when it binds, `status` says so);
    `start` (0/1 sides) is tried as the first incumbent."""
    if not time_limit > 0:
        raise ValueError(f"time_limit must be > 0, got {time_limit!r}")
    if not node_limit >= 1:
        raise ValueError(f"node_limit must be >= 1, got {node_limit!r}")
    n = graph.n
    if len(graph.edges) == 0:
        return MaxCutSolve(0.0, np.zeros(n, dtype=int), 0.0, True, 0.0, "optimal", 0, 0.0)
    model = Model("maxcut")
    model.hideOutput()
    model.setParam("limits/nodes", int(node_limit))
    model.setParam("limits/time", float(time_limit))
    model.setParam("timing/clocktype", 1)  # CPU time: other processes' load does not move the limit
    model.setParam("parallel/maxnthreads", 1)
    model.setParam("lp/threads", 1)
    model.setParam("randomization/randomseedshift", int(seed))
    x = [model.addVar(f"x{i}", vtype="B", ub=0.0 if i == n - 1 else 1.0) for i in range(n)]
    y = []
    for e, ((u, v), w) in enumerate(zip(graph.edges.tolist(), graph.weights.tolist())):
        ye = model.addVar(f"y{e}", lb=0.0, ub=1.0)
        model.addCons(ye <= x[u] + x[v])  # all four, so that y is the cut vector and odd-cycle cuts are valid
        model.addCons(ye <= 2 - x[u] - x[v])
        model.addCons(ye >= x[u] - x[v])
        model.addCons(ye >= x[v] - x[u])
        y.append(ye)
    model.setObjective(quicksum(w * ye for w, ye in zip(graph.weights.tolist(), y)), "maximize")
    model.includeSepa(OddCycleSeparator(n, graph.edges, y), "maxcut_oddcycle", "odd-cycle inequalities of the cut polytope",
                      priority=1000, freq=1)
    if start is not None:
        start = np.asarray(start, dtype=int) ^ int(start[n - 1])  # the fixed node on side 0
        sol = model.createSol()
        for i in range(n):
            model.setSolVal(sol, x[i], float(start[i]))
        for e, (u, v) in enumerate(graph.edges.tolist()):
            model.setSolVal(sol, y[e], float(start[u] != start[v]))
        model.addSol(sol)
    model.optimize()
    best = model.getBestSol()
    sides = np.array([round(model.getSolVal(best, xi)) for xi in x], dtype=int)
    cut = graph.cut(sides)
    bound = max(float(model.getDualbound()), cut)
    status = model.getStatus()
    proved = status == "optimal"
    return MaxCutSolve(cut, sides, cut if proved else bound, proved, 0.0 if proved else (bound - cut) / max(abs(cut), 1.0),
                       status, int(model.getNNodes()), float(model.getSolvingTime()))
