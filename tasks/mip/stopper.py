"""The online stopper: the trained network inside SCIP's event handler (spec §3.7).

Every recorded row goes through the LSTM exactly once, in order, so the online predictions
equal the replayed ones on the same rows; the solve stops at the first row with an incumbent
whose predicted gap is below tau. The stopper bundle is the model file plus its calibration
scores, so tau can be recomputed for any alpha.
"""
from __future__ import annotations

from pathlib import Path

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
            features = self.stream.push(rows["t"][k], rows["lb"][k], rows["ub"][k])
            gap, self.state = self.model.step(features, self.state, self.normalizer)
            self.predictions.append(gap)
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
