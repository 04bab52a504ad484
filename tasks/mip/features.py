"""Solver-state features of a recorded solve (spec §3.1), on eligible rows only.

A row is *eligible* when both bounds are finite (|L|, |U| < B: SCIP has a dual bound and an
incumbent, not the clipped "none yet" value +-B) and the root node is finished (SCIP has
processed at least `ROOT_DONE` nodes). Only eligible rows are features, normaliser data,
network inputs and candidate stops: the first event fires at t = 0 with L = -B, and one such
row would set the normaliser's scale (1 objective unit = 1e-9 of input for B = 5e8) and pull
the decayed averages for many rows after it; the root's first rows are artefacts the
calibration score would otherwise be set by. The same rule gates the calibration score and
the online stop (tasks/mip/conformal.py, stopper.py), so the conformal guarantee is exact.

Eleven columns per eligible sample k: the bounds L_k, U_k, the feature clock t_k, for each
rate r in {0.01, 1, 5} per second time-decayed averages of L and U,

    a_0 = x_0,   a_k = (e^{-r Δ_k} a_{k-1} + x_k) / (e^{-r Δ_k} + 1),   Δ_k = t_k - t_{k-1}

(over eligible rows: the first eligible row starts the averages), and two gap columns beside
the spec's nine: U_k - L_k and the scale-free (U_k - L_k) / (|U_k| + 1). The decayed average is
not a standard EMA: Δ → ∞ forgets the past (a_k = x_k), Δ = 0 gives the midpoint.
`feature_matrix` (a whole trajectory) and `FeatureStream` (one row at a time, for the online
stopper) share `eligible` and the one-step update `_decay_step`, so both give bit-identical
numbers on the same rows.
"""
from __future__ import annotations

import math

import numpy as np

from tasks.mip.trajectory import Trajectory

RATES = (0.01, 1.0, 5.0)
FEATURES = ("lb", "ub", "time", "lb_w0.01", "ub_w0.01", "lb_w1", "ub_w1", "lb_w5", "ub_w5", "gap", "rel_gap")
LB, UB, TIME = 0, 1, 2  # column indices the model and the normaliser rely on
ROOT_DONE = 2  # SCIP's node count is 1 while the root is processed and 2 once its first child is


def eligible(lb, ub, nodes, bound: float):
    """Rows where both bounds are finite and the root node is done (array in, bool array out)."""
    lb, ub, nodes = np.asarray(lb, dtype=float), np.asarray(ub, dtype=float), np.asarray(nodes)
    return (np.abs(lb) < bound) & (np.abs(ub) < bound) & (nodes >= ROOT_DONE)


def eligible_rows(traj: Trajectory) -> np.ndarray:
    return eligible(traj.lb, traj.ub, traj.nodes, traj.bound)


def _decay_step(previous: float, x: float, dt: float, rate: float) -> float:
    """One update of the time-decayed average (the same expression online and offline)."""
    w = math.exp(-rate * dt)
    return (w * previous + x) / (w + 1.0)


def decayed_average(x: np.ndarray, t: np.ndarray, rate: float) -> np.ndarray:
    """Time-decayed average a_k of the series x_k sampled at times t_k, with `rate` per second."""
    x = np.asarray(x, dtype=float)
    t = np.asarray(t, dtype=float)
    if x.shape != t.shape or x.ndim != 1:
        raise ValueError(f"decayed_average: x and t must be 1-D of equal length, got shapes {x.shape} and {t.shape}")
    if not rate >= 0:
        raise ValueError(f"decayed_average: rate must be >= 0, got {rate}")
    out = np.empty_like(x)
    if len(x) == 0:
        return out
    out[0] = x[0]
    for k in range(1, len(x)):
        out[k] = _decay_step(float(out[k - 1]), float(x[k]), float(t[k] - t[k - 1]), rate)
    return out


def _gaps(lb, ub):
    """U - L and the scale-free (U - L) / (|U| + 1)."""
    gap = ub - lb
    return gap, gap / (np.abs(ub) + 1.0)


def feature_matrix(traj: Trajectory) -> np.ndarray:
    """(K_eligible, 11) features of the trajectory's eligible rows, columns in FEATURES order."""
    mask = eligible_rows(traj)
    lb, ub = np.asarray(traj.lb, dtype=float)[mask], np.asarray(traj.ub, dtype=float)[mask]
    t = np.asarray(traj.t, dtype=float)[mask]
    columns = [lb, ub, t]
    for rate in RATES:
        columns += [decayed_average(lb, t, rate), decayed_average(ub, t, rate)]
    columns += list(_gaps(lb, ub))
    return np.stack(columns, axis=1).reshape(len(t), len(FEATURES))


class FeatureStream:
    """Online features: push one sample (t, lb, ub, nodes) at a time; its 11-vector when the
    row is eligible, None when it is not (the stream then does not move). Gives the same
    numbers as `feature_matrix` on the same rows."""

    def __init__(self, bound: float):
        if not bound > 0:
            raise ValueError(f"FeatureStream: bound must be > 0, got {bound!r}")
        self.bound = float(bound)
        self._t: float | None = None
        self._averages: list[float] = []  # [lb_w0.01, ub_w0.01, lb_w1, ub_w1, lb_w5, ub_w5]

    def push(self, t: float, lb: float, ub: float, nodes: int) -> np.ndarray | None:
        if not eligible(lb, ub, nodes, self.bound):
            return None
        lb, ub, t = float(lb), float(ub), float(t)
        if self._t is None:
            self._averages = [lb, ub] * len(RATES)
        else:
            dt = t - self._t
            self._averages = [
                _decay_step(self._averages[2 * i + j], x, dt, rate)
                for i, rate in enumerate(RATES)
                for j, x in enumerate((lb, ub))
            ]
        self._t = t
        return np.array([lb, ub, t, *self._averages, *_gaps(lb, ub)], dtype=float)
