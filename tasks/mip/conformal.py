"""Split-conformal calibration and the stopping rules, replayed on recorded solves
(spec §3.6-3.7, baselines §4.2-4.3, §4.5, §4.6, claim 1 of §6).

Units: predictions, scores and tau are absolute objective units; eps is relative
(r = (U - U_final) / (|U_final| + 0.1)). Mixing them is intended (§3.6).

Eligibility: the threshold rules (the network's and the algorithmic-gap rule's) may only stop at
eligible rows (tasks/mip/features.py: finite bounds, root node done); their "predictions" are
+inf elsewhere, so the calibration score (a running minimum) and the stop see the same rows and
the guarantee P(fail) = P(s_new < tau) <= alpha stays exact.

Every rule replayed on a trajectory returns a `StopOutcome`, so the evaluate stage compares the
method and the baselines without special cases. A stop counts as "fired" only where SCIP would
not have finished by itself: its own gap was still above its tolerance at that row.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tasks.mip.features import eligible_rows
from tasks.mip.trajectory import Trajectory

_TOL = 1e-9  # absorbs float error in alpha * (n + 1) (e.g. 0.29 * 100 = 28.999999999999996)


# ---------------------------------------------------------------------------------------------
# Quantiles


def _check_alpha(alpha: float) -> None:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")


def quantile_index(n: int, alpha: float) -> int:
    """j = floor(alpha (n + 1)): tau is the j-th smallest of n scores; j = 0 means tau = -inf."""
    _check_alpha(alpha)
    if n < 0:
        raise ValueError(f"quantile_index: n must be >= 0, got {n}")
    return math.floor(alpha * (n + 1) + _TOL)


def conformal_threshold(scores, alpha: float, method: str = "finite") -> float:
    """tau from calibration scores. "finite": the j-th smallest score, j = floor(alpha (n + 1)),
    or -inf when j = 0 (never stop early); then P(s_new < tau) <= j / (n + 1) <= alpha.
    "numpy": np.quantile(scores, alpha), the code's choice (slightly anti-conservative)."""
    scores = np.sort(np.asarray(scores, dtype=float))
    if method == "finite":
        j = quantile_index(len(scores), alpha)
        return -math.inf if j == 0 else float(scores[j - 1])
    if method == "numpy":
        _check_alpha(alpha)
        if len(scores) == 0:
            raise ValueError("conformal_threshold: method 'numpy' needs at least one score")
        return float(np.quantile(scores, alpha))
    raise ValueError(f"conformal_threshold: method must be 'finite' or 'numpy', got {method!r}")


# ---------------------------------------------------------------------------------------------
# Scores and the stopping rule


def first_eps_optimal(r: np.ndarray, eps: float) -> int:
    """k* = the first sample with relative true gap r_k <= eps; len(r) if there is none."""
    hits = np.flatnonzero(np.asarray(r) <= eps)
    return int(hits[0]) if len(hits) else len(r)


def score(pred_gaps: np.ndarray, r: np.ndarray, eps: float) -> float:
    """Nonconformity score s = min of the predictions strictly before k* (= pred_0 if k* = 0).

    The rule fails on this trajectory exactly when it fires before k*, i.e. when s < tau.
    If no sample is eps-optimal (k* = K) the score is the minimum over all predictions.
    """
    pred_gaps = np.asarray(pred_gaps, dtype=float)
    if len(pred_gaps) == 0 or len(pred_gaps) != len(r):
        raise ValueError(f"score: need equal, non-zero lengths, got {len(pred_gaps)} predictions and {len(r)} gaps")
    running_min = np.minimum.accumulate(pred_gaps)
    return float(running_min[max(first_eps_optimal(r, eps) - 1, 0)])


def calibrate(preds: list[np.ndarray], rs: list[np.ndarray], *, alpha: float, eps: float,
              method: str = "finite") -> tuple[float, np.ndarray]:
    """Scores of the calibration trajectories (one each) and the threshold: (tau, scores)."""
    scores = np.array([score(p, r, eps) for p, r in zip(preds, rs, strict=True)])
    return conformal_threshold(scores, alpha, method), scores


def first_fire(pred_gaps, nsols, tau: float) -> int | None:
    """Index of the first sample with an incumbent (nsols >= 1) and prediction < tau; None when
    the rule never fires there."""
    hits = np.flatnonzero((np.asarray(nsols) >= 1) & (np.asarray(pred_gaps, dtype=float) < tau))
    return int(hits[0]) if len(hits) else None


def replay_stop(pred_gaps: np.ndarray, nsols: np.ndarray, tau: float) -> int:
    """first_fire, or the last index when the rule never fires (the solver then finishes to its
    own tolerance)."""
    index = first_fire(pred_gaps, nsols, tau)
    return len(pred_gaps) - 1 if index is None else index


def algorithmic_gaps(traj: Trajectory) -> np.ndarray:
    """Baseline 5's "prediction": the solver's own absolute gap U_k - L_k on eligible rows, +inf elsewhere."""
    gaps = np.asarray(traj.ub, dtype=float) - np.asarray(traj.lb, dtype=float)
    return np.where(eligible_rows(traj), gaps, np.inf)


def scip_gap(ub: float, lb: float) -> float:
    """SCIP's relative gap |U - L| / min(|U|, |L|): 0 when U = L, infinite when the bounds differ
    in sign or one is 0 (SCIPgetGap)."""
    if ub == lb:
        return 0.0
    if ub * lb <= 0:
        return math.inf
    return abs(ub - lb) / min(abs(ub), abs(lb))


# ---------------------------------------------------------------------------------------------
# Outcomes


@dataclass
class StopOutcome:
    """One stopping rule replayed on one trajectory.

    index: the sample whose incumbent is returned; time: seconds a user waits (wall clock at the
    stop, or the full solve time if the rule never fired, plus the inference time attributed);
    objective: U at the stop (minimization sense); gap: relative true gap r there;
    stopped_early: the rule fired before SCIP would have finished by itself (before the last
    sample, with SCIP's own gap still above its tolerance); covered: gap <= eps.
    """

    instance: str
    rule: str
    index: int
    time: float
    objective: float
    gap: float
    stopped_early: bool
    covered: bool


def stop_outcome(traj: Trajectory, index: int, *, rule: str, eps: float, time: float | None = None,
                 inference_s: float | np.ndarray = 0.0, solver_gap: float = 1e-4) -> StopOutcome:
    """The outcome of returning the incumbent of sample `index`.

    time defaults to wall[index] when stopped before the last sample, else the solve's total
    time. inference_s is the inference cost per sample (scalar, counted for samples 0..index) or
    per-sample seconds (an array, summed over 0..index). solver_gap is SCIP's own tolerance
    (limits/gap): a stop where SCIP's gap is already within it does not count as fired.
    """
    K = len(traj)
    if not 0 <= index < K:
        raise ValueError(f"stop_outcome: index must be in [0, {K}), got {index}")
    early = index < K - 1 and scip_gap(float(traj.ub[index]), float(traj.lb[index])) > solver_gap
    if time is None:
        time = float(traj.wall[index]) if index < K - 1 else float(traj.solve_time)
    if np.ndim(inference_s) == 0:
        time += float(inference_s) * (index + 1)
    else:
        time += float(np.sum(np.asarray(inference_s, dtype=float)[: index + 1]))
    gap = float(traj.r[index])
    return StopOutcome(instance=traj.instance, rule=rule, index=int(index), time=float(time),
                       objective=float(traj.ub[index]), gap=gap, stopped_early=bool(early), covered=bool(gap <= eps))


def threshold_stop(traj: Trajectory, pred_gaps: np.ndarray, tau: float, *, rule: str, eps: float,
                   inference_s: float | np.ndarray = 0.0, solver_gap: float = 1e-4) -> StopOutcome:
    """Replay the threshold rule (the method, or baseline 5 with algorithmic_gaps) on a trajectory."""
    return stop_outcome(traj, replay_stop(pred_gaps, traj.nsols, tau), rule=rule, eps=eps, inference_s=inference_s,
                        solver_gap=solver_gap)


def solution_limit_stop(traj: Trajectory, k: int, *, eps: float = 1e-3) -> StopOutcome:
    """Replay of baselines 2-3: stop at the first sample with nsols >= k (else at the end)."""
    if k < 1:
        raise ValueError(f"solution_limit_stop: k must be >= 1, got {k}")
    hits = np.flatnonzero(np.asarray(traj.nsols) >= k)
    index = int(hits[0]) if len(hits) else len(traj) - 1
    return stop_outcome(traj, index, rule=f"solution_limit_{k}", eps=eps)


def time_to_eps(traj: Trajectory, eps: float) -> float:
    """Wall time of the first eps-optimal sample (the solve time if none is)."""
    k = first_eps_optimal(traj.r, eps)
    return float(traj.wall[k]) if k < len(traj) else float(traj.solve_time)


def time_limit_threshold(times_to_eps, alpha: float) -> float:
    """Baseline 6: T = the ceil((1 - alpha)(n + 1))-th smallest time to eps-optimality; inf if
    that index exceeds n. ceil((1 - alpha)(n + 1)) = n + 1 - floor(alpha (n + 1))."""
    times = np.sort(np.asarray(times_to_eps, dtype=float))
    n = len(times)
    index = n + 1 - quantile_index(n, alpha)
    return math.inf if index > n else float(times[index - 1])


def time_limit_stop(traj: Trajectory, T: float, *, eps: float = 1e-3) -> StopOutcome:
    """Replay of baseline 6: stop at wall time T and return the incumbent held then, i.e. that of
    the last sample with wall <= T (sample 0 if none). No stop if T >= the solve time."""
    if T >= traj.solve_time:
        return stop_outcome(traj, len(traj) - 1, rule="time_limit", eps=eps)
    held = np.flatnonzero(np.asarray(traj.wall) <= T)
    index = int(held[-1]) if len(held) else 0
    outcome = stop_outcome(traj, index, rule="time_limit", eps=eps, time=float(T))
    outcome.stopped_early = True  # the limit cut the solve short, even if no new sample came after T
    return outcome


# ---------------------------------------------------------------------------------------------
# Claim 1: coverage over random calibration / test splits


def coverage_over_splits(preds: list[np.ndarray], rs: list[np.ndarray], nsols: list[np.ndarray], *,
                         alpha: float, eps: float, n_splits: int = 200, seed: int = 0,
                         method: str = "finite") -> list[float]:
    """Pool of N trajectories (predictions, relative gaps, solution counts per instance): draw
    `n_splits` random splits into floor(N/2) calibration and the rest test with a seeded rng,
    calibrate tau on the first part, return each split's coverage on the second part."""
    N = len(preds)
    if not (len(rs) == len(nsols) == N) or N < 2:
        raise ValueError(f"coverage_over_splits: need >= 2 instances with equal counts, got "
                         f"{len(preds)} predictions, {len(rs)} gaps, {len(nsols)} solution counts")
    if n_splits < 1:
        raise ValueError(f"coverage_over_splits: n_splits must be >= 1, got {n_splits}")
    scores = np.array([score(p, r, eps) for p, r in zip(preds, rs)])
    rng = np.random.default_rng(seed)
    n_cal = N // 2
    coverages = []
    for _ in range(n_splits):
        perm = rng.permutation(N)
        cal, test = perm[:n_cal], perm[n_cal:]
        tau = conformal_threshold(scores[cal], alpha, method)
        covered = [np.asarray(rs[i])[replay_stop(preds[i], nsols[i], tau)] <= eps for i in test]
        coverages.append(float(np.mean(covered)))
    return coverages
