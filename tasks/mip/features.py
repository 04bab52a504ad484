"""Solver-state features of a recorded solve (spec mip_early_stop §3.1).

Nine columns per sample k: the bounds L_k, U_k, the feature clock t_k and, for each rate
r in {0.01, 1, 5} per second, time-decayed averages of L and U:

    a_0 = x_0,   a_k = (e^{-r Δ_k} a_{k-1} + x_k) / (e^{-r Δ_k} + 1),   Δ_k = t_k - t_{k-1}.

This is not a standard EMA: a long gap (Δ → ∞) forgets the past (a_k = x_k), no gap (Δ = 0)
gives the midpoint of the old average and the new value. `feature_matrix` (a whole trajectory)
and `FeatureStream` (one row at a time, for the online stopper) share the one-step update
`_decay_step`, so both give bit-identical numbers on the same rows.
"""
from __future__ import annotations

import math

import numpy as np

from tasks.mip.trajectory import Trajectory

RATES = (0.01, 1.0, 5.0)
FEATURES = ("lb", "ub", "time", "lb_w0.01", "ub_w0.01", "lb_w1", "ub_w1", "lb_w5", "ub_w5")
LB, UB, TIME = 0, 1, 2  # column indices the model and the normaliser rely on


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


def _clip(values: np.ndarray | float, bound: float):
    return np.clip(values, -bound, bound)


def feature_matrix(traj: Trajectory) -> np.ndarray:
    """(K, 9) features of a trajectory, columns in FEATURES order; bounds clipped to [-B, B]."""
    lb = _clip(np.asarray(traj.lb, dtype=float), traj.bound)
    ub = _clip(np.asarray(traj.ub, dtype=float), traj.bound)
    t = np.asarray(traj.t, dtype=float)
    columns = [lb, ub, t]
    for rate in RATES:
        columns += [decayed_average(lb, t, rate), decayed_average(ub, t, rate)]
    return np.stack(columns, axis=1)


class FeatureStream:
    """Online features: push one sample (t, lb, ub) at a time, get its 9-vector.

    Gives the same numbers as `feature_matrix` on the same rows (same clipping, same update).
    """

    def __init__(self, bound: float = math.inf):
        self.bound = bound
        self._t: float | None = None
        self._averages: list[float] = []  # [lb_w0.01, ub_w0.01, lb_w1, ub_w1, lb_w5, ub_w5]

    def push(self, t: float, lb: float, ub: float) -> np.ndarray:
        lb, ub, t = float(_clip(lb, self.bound)), float(_clip(ub, self.bound)), float(t)
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
        return np.array([lb, ub, t, *self._averages], dtype=float)
