"""Conformal calibration of every stopping rule of one family on its calibration split (spec §3.6, §4.5-4.6):
the network's threshold tau, the algorithmic-gap rule's (same scores with U - L) and the time limit."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tasks.mip.conformal import (
    algorithmic_gaps,
    calibrate,
    conformal_threshold,
    quantile_index,
    time_limit_threshold,
    time_to_eps,
)
from tasks.mip.trajectory import Trajectory

Predictor = Callable[[Trajectory], np.ndarray]


def calibrate_family(cal: list[Trajectory], predict: Predictor, alpha: float, eps: float, quantile: str) -> dict:
    """tau of the network, of the algorithmic-gap rule (same scores with U - L) and the time limit."""
    rs = [t.r for t in cal]
    tau, scores = calibrate([predict(t) for t in cal], rs, alpha=alpha, eps=eps, method=quantile)
    tau_gap, gap_scores = calibrate([algorithmic_gaps(t) for t in cal], rs, alpha=alpha, eps=eps, method=quantile)
    times = [time_to_eps(t, eps) for t in cal]
    return {
        "n": len(cal), "alpha": alpha, "epsilon": eps, "quantile": quantile, "j": quantile_index(len(cal), alpha),
        "network": {"scores": scores.tolist(), "tau": tau, "tau_numpy": conformal_threshold(scores, alpha, "numpy")},
        "gap_rule": {"scores": gap_scores.tolist(), "tau": tau_gap},
        "time_limit": {"times": times, "tau": time_limit_threshold(times, alpha)},
    }
