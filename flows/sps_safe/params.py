"""The typed params of sps_safe: one profile of stages/sps_safe/params.yaml."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from tasks.core.params import Params as BaseParams
from tasks.train.lr_grid import check_grid, check_same_shape

Positive = Annotated[float, Field(gt=0)]
P1, P2 = "svm_interp", "svm_noisy"  # the convex problems, named as their fields of Params
# problem -> the baselines whose grid C1 takes at its best point; the solve stage widens these grids at an edge
# (tasks.train.lr_grid), so they share one shape (equal tuning effort) and are sorted
TUNED = {P1: ("sgd", "sps_max")}


class SvmGrid(BaseParams):
    """One convex problem's runs: `seeds` instances, `epochs` of n // batch steps, and the method grids."""

    seeds: int = Field(ge=1)
    epochs: int = Field(ge=1)
    batch: int = Field(ge=1)
    sgd: list[Positive]  # gamma
    sps_max: list[Positive]  # gamma_b
    sps_max_c: Positive
    sps_plus: bool  # the oracle baseline (needs f_i(x*) from the LP)
    sps_safe: list[Positive]  # M
    ima: list[Positive]  # eta of IMA with a constant step
    ima_sps_safe: list[Positive]  # M
    ima_lam: float = Field(ge=0)
    trace_points: int = Field(ge=2)


class DigitsOptimizerParams(BaseParams):
    kind: Literal["sps_safe", "ima_sps_safe", "sps_max", "sgd", "adam"]
    M: Positive = 1.0
    lam: float = Field(default=9.0, ge=0)
    c: Positive = 0.5
    gamma_b: Positive = 1.0
    lr: Positive = 1e-3


class DigitsParams(BaseParams):
    seeds: int = Field(ge=1)
    epochs: int = Field(ge=1)
    batch: int = Field(ge=1)
    split_seed: int = Field(ge=0)
    test_fraction: float = Field(gt=0, lt=1)
    optimizers: list[DigitsOptimizerParams] = Field(min_length=1)


class Params(BaseParams):
    seed: int = Field(ge=0)
    svm_interp: SvmGrid
    svm_noisy: SvmGrid
    digits: DigitsParams
    decide_claims: bool
    device: str = "auto"

    @model_validator(mode="after")
    def _tuned_grids(self):
        for problem, rules in TUNED.items():
            g = getattr(self, problem)
            check_same_shape({rule: check_grid(getattr(g, rule), f"{problem}.{rule}") for rule in rules})
        return self
