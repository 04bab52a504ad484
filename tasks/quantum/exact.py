"""Reference optima of MaxCut by SCIP (pyscipopt): a proved optimum where SCIP closes the gap in its
time limit, else its best cut and dual bound.

Formulation: x_i in {0, 1} (x of the last node fixed to 0, the Z2 symmetry), one continuous
y_uv in [0, 1] per edge standing for [x_u != x_v]. An edge of positive weight only needs the upper
bounds y <= x_u + x_v and y <= 2 - x_u - x_v (maximisation pushes y up to the XOR), one of negative
weight only the lower bounds y >= x_u - x_v and y >= x_v - x_u; so at every integer x the best y is
the XOR and the objective sum w_uv y_uv is the cut. A known cut (local search) is handed to SCIP
as a start, so its answer is never worse than that.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from pyscipopt import Model, quicksum

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


def scip_maxcut(graph: WeightedGraph, *, node_limit: int, time_limit: float, start: np.ndarray | None = None,
                seed: int = 0) -> MaxCutSolve:
    """Maximum cut of `graph` by SCIP on one thread within `node_limit` branch-and-bound nodes (the budget:
    deterministic, so the same graph gets the same answer on any machine) and `time_limit` seconds of
    wall time (a safety net; when it binds, the answer depends on the machine and says so in `status`);
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
    model.setParam("timing/clocktype", 2)  # wall clock, as the time limit is meant
    model.setParam("parallel/maxnthreads", 1)
    model.setParam("lp/threads", 1)
    model.setParam("randomization/randomseedshift", int(seed))
    x = [model.addVar(f"x{i}", vtype="B", ub=0.0 if i == n - 1 else 1.0) for i in range(n)]
    y = []
    for e, ((u, v), w) in enumerate(zip(graph.edges.tolist(), graph.weights.tolist())):
        ye = model.addVar(f"y{e}", lb=0.0, ub=1.0)
        if w > 0:
            model.addCons(ye <= x[u] + x[v])
            model.addCons(ye <= 2 - x[u] - x[v])
        else:
            model.addCons(ye >= x[u] - x[v])
            model.addCons(ye >= x[v] - x[u])
        y.append(ye)
    model.setObjective(quicksum(w * ye for w, ye in zip(graph.weights.tolist(), y)), "maximize")
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
