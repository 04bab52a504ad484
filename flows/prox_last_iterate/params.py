"""The typed params of prox_last_iterate: one profile of stages/prox_last_iterate/params.yaml."""
from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from tasks.core.params import LIST_AS_TUPLE, Params as BaseParams

Positive = Annotated[float, Field(gt=0)]
Horizon = Annotated[int, Field(ge=2)]
Q1, Q2 = "netlasso", "lasso_diabetes"


class Runs(BaseParams):
    """The step-size grid (gamma = c sqrt(reference_T) / (L-hat sqrt(T))), the horizons and the pair (T_from, T_to)
    whose gap ratio C1 checks."""

    horizons: list[Horizon] = Field(min_length=2)
    cs: list[Positive] = Field(min_length=1)
    rate_pair: Annotated[tuple[Horizon, Horizon], LIST_AS_TUPLE]

    @model_validator(mode="after")
    def _pair(self):
        if list(self.horizons) != sorted(set(self.horizons)):
            raise ValueError(f"horizons must be increasing, got {self.horizons}")
        if not all(t in self.horizons for t in self.rate_pair) or self.rate_pair[0] >= self.rate_pair[1]:
            raise ValueError(f"rate_pair must be two increasing points of horizons, got {self.rate_pair}")
        return self


class NetLasso(Runs):
    group_sizes: list[Annotated[int, Field(ge=1)]] = Field(min_length=1)
    features: int = Field(ge=1)
    rows: int = Field(ge=1)
    p_in: float = Field(ge=0, le=1)
    p_out: float = Field(ge=0, le=1)
    noise: float = Field(ge=0)
    lam: Positive


class LassoDiabetes(Runs):
    lam_fraction: Positive  # lam = lam_fraction * lam_max, lam_max = ||X^T y||_inf / n


class Params(BaseParams):
    seed: int = Field(ge=0)
    seeds: int = Field(ge=1)
    reference_T: int = Field(ge=1)
    record_points: int = Field(ge=2)
    netlasso: NetLasso
    lasso_diabetes: LassoDiabetes
    decide_claims: bool
    device: str = "cpu"
