"""The online stopper: the trained network inside SCIP's event handler (spec §3.7).

Every eligible recorded row (finite bounds, root node done: tasks/mip/features.py) goes
through the LSTM exactly once, in order, so the online predictions equal the replayed ones on
the same rows; the other rows predict +inf, as in replay. The solve stops at the first row
whose predicted gap is below tau. The stopper times its own inference, so the cost a user
pays is measured inside the solves it stops. The stopper bundle is the model file plus its calibration
scores, so tau can be recomputed for any alpha.
"""
from __future__ import annotations

import math
from pathlib import Path
from time import perf_counter

import numpy as np

from .conformal import conformal_threshold
from .features import FeatureStream
from .model import GapLSTM, Normalizer, load_model
from .trajectory import Trajectory


class NetworkStopper:
    """stopper(rows) -> True to stop; `rows` are the sampler's columns so far (t, lb, ub, nsols...)."""

    def __init__(self, model: GapLSTM, normalizer: Normalizer, tau: float, bound: float):
        self.model, self.normalizer, self.tau = model, normalizer, tau
        self.stream = FeatureStream(bound)
        self.state = None
        self.seen = 0
        self.predictions: list[float] = []
        self.inference_s = 0.0  # seconds spent in features + network, over `inferences` eligible rows
        self.inferences = 0
        self._warm_up()

    def _warm_up(self) -> None:
        """One throw-away network step, so torch's one-off set-up (per process) is paid here and
        not inside the first solve this stopper is timed in."""
        self.model.step(np.zeros(len(self.normalizer.mu)), None, self.normalizer)

    @property
    def can_fire(self) -> bool:
        """False when tau is -inf (too few calibration scores for alpha): the rule never stops."""
        return self.tau > -math.inf

    @classmethod
    def load(cls, path: Path, *, alpha: float | None = None, family: str | None = None) -> NetworkStopper:
        """A stopper from a calibrated bundle; `alpha` recomputes tau from the stored scores,
        `family` refuses a bundle trained for another family."""
        model, normalizer, meta = load_model(path, family=family)
        if "scores" not in meta:
            raise ValueError(f"{path} holds a model without calibration scores (use the calibrate stage's stopper)")
        alpha = meta["alpha"] if alpha is None else alpha
        tau = conformal_threshold(meta["scores"], alpha, meta.get("quantile", "finite"))
        stopper = cls(model, normalizer, tau, meta["bound"])
        stopper.meta = meta | {"alpha": alpha, "tau": tau}
        return stopper

    def __call__(self, rows: dict) -> bool:
        for k in range(self.seen, len(rows["t"])):  # rows recorded before the first incumbent too
            start = perf_counter()
            features = self.stream.push(rows["t"][k], rows["lb"][k], rows["ub"][k], rows["nodes"][k])
            if features is None:
                self.predictions.append(math.inf)
                continue
            gap, self.state = self.model.step(features, self.state, self.normalizer)
            self.predictions.append(gap)
            self.inference_s += perf_counter() - start
            self.inferences += 1
        self.seen = len(rows["t"])
        return self.predictions[-1] < self.tau


def signature(trajectories: list[Trajectory]) -> dict:
    """What instances a stopper was trained on: objective sense and the size ranges seen."""
    return {"sense": sorted({t.sense for t in trajectories}),
            "n_vars": [min(t.info["n_vars"] for t in trajectories), max(t.info["n_vars"] for t in trajectories)],
            "n_cons": [min(t.info["n_cons"] for t in trajectories), max(t.info["n_cons"] for t in trajectories)]}


def signature_mismatch(model, seen: dict, slack: float = 2.0) -> str | None:
    """Why `model` looks unlike the instances of `seen` (another family), or None if it fits:
    another objective sense, or a size outside [min / slack, max * slack] of the training sizes."""
    sense = 1 if model.getObjectiveSense() == "minimize" else -1
    if sense not in seen["sense"]:
        return f"objective sense {model.getObjectiveSense()} was never seen in training"
    for key, value in (("n_vars", model.getNVars()), ("n_cons", model.getNConss())):
        low, high = seen[key]
        if not low / slack <= value <= high * slack:
            return f"{key} = {value} is far outside the training range [{low}, {high}]"
    return None
