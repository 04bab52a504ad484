"""The rate as a fitted slope on log-log axes: the least-squares slope of the mean over seeds of log(F(x_T) - F*)
against log T over the horizon grid (the mean of the per-seed slopes), with a bootstrap 95% interval over seeds
(one seed: no interval); and the same fit of the paper's bound, ln T / sqrt T with no noise, over the same grid.

The runs of different horizons draw their samples independently (one generator per (problem, T)), so a seed at
one T is no pair of the same seed at another: the bootstrap resamples each horizon's seeds on its own, then refits.
"""
from __future__ import annotations

import numpy as np

from tasks.core.claims import Interval, bootstrap_interval


def log_gaps(gaps: np.ndarray) -> np.ndarray:
    return np.log(np.maximum(gaps, np.finfo(float).tiny))


def slope_weights(horizons: list[int]) -> np.ndarray:
    """w with slope = w @ y for the least-squares slope of y against log T."""
    x = np.log(np.asarray(horizons, dtype=float))
    xc = x - x.mean()
    return xc / (xc @ xc)


def mean_log_slope(weights: np.ndarray, *logs_by_T: np.ndarray) -> float:
    return float(weights @ np.array([logs.mean() for logs in logs_by_T]))


def log_slope(horizons: list[int], *gaps_by_T: np.ndarray) -> float:
    """gaps_by_T: one array of per-seed gaps per horizon -> the slope of their mean log against log T."""
    return mean_log_slope(slope_weights(horizons), *map(log_gaps, gaps_by_T))


def bound_slope(horizons: list[int]) -> float:
    """The least-squares slope of log(ln T / sqrt T) against log T over `horizons`: -1/2 plus the log factor's share
    over this grid (about 1 / mean ln T)."""
    T = np.asarray(horizons, dtype=float)
    return float(slope_weights(horizons) @ np.log(np.log(T) / np.sqrt(T)))


def slope_fit(horizons: list[int], gaps_by_T: list[np.ndarray], seed: int) -> dict:
    """{"slope", "interval", "seeds", "horizons"}: the fitted slope, its bootstrap interval over seeds (None below
    two seeds) and the grid it was fitted over."""
    weights, logs = slope_weights(horizons), [log_gaps(gaps) for gaps in gaps_by_T]
    seeds = min(len(gaps) for gaps in gaps_by_T)
    interval: Interval | None = None
    if seeds >= 2:
        interval = bootstrap_interval(logs, lambda *resampled: mean_log_slope(weights, *resampled), seed,
                                      "seeds (resampled per horizon, refit)")
    return {"slope": mean_log_slope(weights, *logs), "interval": interval, "seeds": seeds, "horizons": list(horizons)}
