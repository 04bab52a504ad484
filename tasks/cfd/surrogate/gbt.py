"""Gradient-boosted trees on the generator parameters -> Cd (spec §4).

A privileged, non-deep sanity baseline: it reads the 16 generator parameters (and the body type
one-hot) that the point-cloud surrogates never see, so it shows the Cd R^2 attainable on our
synthetic family. scikit-learn defaults except the seed.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.ensemble import GradientBoostingRegressor

from tasks.cfd.vehicles import BODY_TYPES

from .samples import Sample


def design_matrix(samples: list[Sample]) -> np.ndarray:
    """[n, 16 + 4]: generator parameters and the body-type one-hot."""
    one_hot = np.array([[s.body_type == t for t in BODY_TYPES] for s in samples], dtype=np.float64)
    return np.concatenate([np.stack([s.params for s in samples]), one_hot], axis=1)


@dataclass
class GBTBaseline:
    model: GradientBoostingRegressor

    def predict_cd(self, samples: list[Sample]) -> np.ndarray:
        return self.model.predict(design_matrix(samples))


def fit_gbt(train: list[Sample], seed: int) -> GBTBaseline:
    model = GradientBoostingRegressor(random_state=seed)
    return GBTBaseline(model.fit(design_matrix(train), np.array([s.cd for s in train])))
