"""The compiled engine of the DQ iterations: how the kernels are called, and which compiled kernels run.

The kernels (tasks/sync/kernels.py, numba) come in two builds of one source: ahead of time (tasks/sync/aot.py, a
native extension loaded in about a millisecond, when it has been built) and numba's JIT (cached on disk, but every
process pays 0.2-0.4 s to start numba's compiler). `engine("numba")` takes the first that is there; `engine("jit")`
always the JIT. Nothing here imports numba: only the JIT build does, when it is chosen.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable

import numpy as np

from tasks.sync import aot
from tasks.sync.dq_operator import DQOperator, Trace
from tasks.sync.dualquat import dq_project, dq_vector_normalize

COMPILED = ("numba", "jit")


def run_power(kernel: Callable, op: DQOperator, v: np.ndarray, rot_tol: float, trans_tol: float,
              max_iter: int) -> Trace:
    """The power method by a compiled kernel: the twin of dq_operator.power_numpy."""
    v = np.ascontiguousarray(dq_vector_normalize(v))
    p = np.ascontiguousarray(dq_project(v))
    rot, trans = np.empty(max_iter), np.empty(max_iter)
    it, converged = kernel(op.indptr, op.indices, op.blocks, v, p, float(rot_tol), float(trans_tol * op.scale),
                           int(max_iter), rot, trans)
    return Trace(v, rot[:it].tolist(), trans[:it].tolist(), bool(converged), projected=p)


def run_gpm(kernel: Callable, op: DQOperator, x: np.ndarray, shift: float, rot_tol: float, trans_tol: float,
            max_iter: int) -> Trace:
    """DQGPM by a compiled kernel: the twin of dq_operator.gpm_numpy."""
    x = np.array(x, dtype=float, order="C")
    rot, trans = np.empty(max_iter), np.empty(max_iter)
    it, converged = kernel(op.indptr, op.indices, op.blocks, x, float(shift), float(rot_tol),
                           float(trans_tol * op.scale), int(max_iter), rot, trans)
    return Trace(x, rot[:it].tolist(), trans[:it].tolist(), bool(converged))


def run_measurements(udq: Callable, sign_fix: Callable, n: int, edges: np.ndarray, Z: np.ndarray,
                     dq: np.ndarray | None) -> np.ndarray:
    """The twin of measurement.measurement_dqs for validated edges (m, 2): the measured DQs (dq, or the UDQs of Z)
    with the sign fix. The BFS visits neighbours in edge order rather than scipy's, so the tree can differ; the sign
    decisions agree except for measurements orthogonal to their tree prediction (noise near 90 degrees)."""
    z = np.array(dq, dtype=float) if dq is not None else udq(np.ascontiguousarray(Z, dtype=float))
    if z.shape != (len(edges), 8):
        raise ValueError(f"need one 8-vector DQ per edge, got {z.shape} for {len(edges)} edges")
    reached = sign_fix(n, np.ascontiguousarray(edges, dtype=np.int64), z)
    if reached < n:
        raise ValueError(f"graph is disconnected: node 0 reaches {reached} of {n} nodes")
    return z


@dataclass(frozen=True)
class Engine:
    """The compiled iterations of one build: build is "aot" or "jit"."""

    build: str
    power: Callable[..., Trace]
    gpm: Callable[..., Trace]
    measurements: Callable[..., np.ndarray]


def bind(build: str, kernels) -> Engine:
    """An Engine over a kernel namespace (the AOT extension or the JIT module)."""
    return Engine(build, partial(run_power, kernels.power_kernel), partial(run_gpm, kernels.gpm_kernel),
                  partial(run_measurements, kernels.udq_from_matrices, kernels.sign_fix_kernel))


def engine(name: str = "numba") -> Engine:
    """"numba": the ahead-of-time build when it is built for the current kernels, else the JIT; "jit": the JIT."""
    if name not in COMPILED:
        raise ValueError(f"compiled engine must be one of {COMPILED}, got {name!r}")
    extension = aot.load() if name == "numba" else None
    if extension is not None:
        return bind("aot", extension)
    from tasks.sync import kernels

    return bind("jit", kernels)
