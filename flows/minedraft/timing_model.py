"""The timing model of spec §3.3 (our derivation): SD and PSD step times from per-stage costs, the linear-cost ceiling
of S = T_SD / (2 T_PSD), and S for a pair of decode runs from the costs each run met."""
from __future__ import annotations

import statistics
from dataclasses import dataclass


def sd_step(k: int, c_d: float, c_v: float, overhead: float) -> float:
    """T_SD = k c_d(B) + c_v(B, k) + o: drafting and verification strictly in turn."""
    return k * c_d + c_v + overhead


def psd_half_step(k: int, c_d_half: float, c_v_half: float, overhead: float) -> float:
    """T_PSD = max(k c_d(B/2), c_v(B/2, k)) + o': one half drafted while the other is verified."""
    return max(k * c_d_half, c_v_half) + overhead


def ideal_ceiling(draft_s: float, verify_s: float) -> float:
    """S with costs linear in the batch and no overhead: (k c_d + c_v) / max(k c_d, c_v), i.e. 1 + k c_d / c_v
    while k c_d <= c_v; 2 when k c_d = c_v. `draft_s` is one step's k c_d, `verify_s` its c_v."""
    return (draft_s + verify_s) / max(draft_s, verify_s)


@dataclass(frozen=True)
class StepCosts:
    """One step's costs as a run met them: drafting (k c_d), verification (c_v with the sampler), overhead (o, o')."""

    draft_s: float
    verify_s: float
    overhead_s: float


def busy_costs(run: dict, overhead_s: float) -> StepCosts:
    """A decode run's own per-step costs: its drafter's and its verifier's busy seconds over its steps (an SD step,
    or a PSD half step: each verification has one draft call)."""
    return StepCosts(run["busy_draft_s"] / run["steps"], run["busy_verify_s"] / run["steps"], overhead_s)


def calibrated_costs(run: dict) -> StepCosts:
    """The run's costs from the calibrations right before and after it (their mean)."""
    sides = run["calibration"]["before"], run["calibration"]["after"]
    return StepCosts(*(statistics.mean(side[key] for side in sides) for key in ("draft_s", "verify_s", "round_trip_s")))


def predicted_run_ratio(sd: StepCosts, sd_steps: int, psd: StepCosts, psd_steps: int) -> float:
    """wall(SD) / wall(PSD) = throughput(PSD) / throughput(SD) for two runs of the same prompts, predicted as
    n_SD T_SD / (n_PSD T_PSD) with T_SD = k c_d + c_v + o and T_PSD = max(k c_d, c_v) + o' (spec §3.3 per step).
    The step counts stand for the spec's B E and B/2 E tokens per step, tails of the queue included."""
    # draft_s is already k c_d: the step formulas with k = 1
    sd_wall = sd_steps * sd_step(1, sd.draft_s, sd.verify_s, sd.overhead_s)
    return sd_wall / (psd_steps * psd_half_step(1, psd.draft_s, psd.verify_s, psd.overhead_s))
