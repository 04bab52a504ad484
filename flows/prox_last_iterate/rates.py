"""The rate as a fitted slope on log-log axes: one least-squares slope of log(F(x_T) - F*) against log T per seed,
then the mean over seeds with a Student-t 95% interval (one seed: no interval)."""
from __future__ import annotations

import numpy as np
from scipy import stats


def seed_slopes(horizons: list[int], gaps: np.ndarray) -> np.ndarray:
    """gaps (seeds, len(horizons)) > 0 -> one slope per seed."""
    x = np.log(np.asarray(horizons, dtype=float))
    y = np.log(np.maximum(gaps, np.finfo(float).tiny))
    xc = x - x.mean()
    return ((y - y.mean(1, keepdims=True)) @ xc) / (xc @ xc)


def slope_interval(slopes: np.ndarray, level: float = 0.95) -> dict:
    n = len(slopes)
    mean = float(np.mean(slopes))
    if n < 2:
        return {"slope": mean, "low": None, "high": None, "seeds": n}
    half = float(stats.t.ppf(0.5 + level / 2, n - 1) * np.std(slopes, ddof=1) / np.sqrt(n))
    return {"slope": mean, "low": mean - half, "high": mean + half, "seeds": n}
