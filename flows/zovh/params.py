"""The typed params of zovh: one profile of stages/zovh/params.yaml."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from tasks.core.params import Params as BaseParams
from tasks.zeroth.descent import KINDS, check_method, queries_per_iteration
from tasks.zeroth.functions import OPTIMISATION_FUNCTIONS
from tasks.zeroth.hessian import NAMES

Positive = Annotated[float, Field(gt=0)]
Estimator = Literal[NAMES]  # type: ignore[valid-type]
# the estimators and methods the claims compare: a profile must run them
CLAIM_ESTIMATORS = ("s1", "s2", "scd", "zovh", "zovh_reuse")
CLAIM_METHODS = ("zo_sgd", "zoar", "zovh_reuse")


class HessianStudy(BaseParams):
    d: int = Field(ge=2)
    seeds: int = Field(ge=1)
    points: int = Field(ge=1)  # evaluation points per path (after `reuse_histories` warm-up points)
    K: int = Field(ge=3)  # new queries per estimate (the claims' budget)
    queries_grid: list[Annotated[int, Field(ge=3)]]  # extra budgets of the error-vs-queries curves (R-near)
    mu: Positive
    noise_std: float = Field(ge=0)
    reuse_histories: int = Field(ge=0)  # previous path points whose pairs zovh_reuse keeps (N = 1 + this)
    path_step: Positive
    radius: Positive  # R-paper: points uniform in this ball
    near_scale: Positive  # R-near: x* + near_scale * N(0, I)
    rosenbrock_alpha: Positive
    estimators: list[Estimator] = Field(min_length=1)


class Method(BaseParams):
    name: str
    kind: Literal[KINDS]  # type: ignore[valid-type]
    histories: int = Field(default=0, ge=0)


class Optimisation(BaseParams):
    d: int = Field(ge=2)
    iterations: int = Field(ge=1)
    seeds: int = Field(ge=1)
    functions: list[Literal[tuple(OPTIMISATION_FUNCTIONS)]] = Field(min_length=1)  # type: ignore[valid-type]
    lrs: list[Positive] = Field(min_length=1)
    K: int = Field(ge=3)  # new function queries per iteration, the same for every method
    mu: Positive
    lam: Positive
    paper_lr: Positive  # the paper's protocol: one lr for every method (reported, not a claim)
    record_every: int = Field(ge=1)
    methods: list[Method] = Field(min_length=1)

    @model_validator(mode="after")
    def _names(self):
        names = [m.name for m in self.methods]
        if len(set(names)) != len(names):
            raise ValueError(f"method names must be unique, got {names}")
        if self.paper_lr not in self.lrs:
            raise ValueError(f"paper_lr {self.paper_lr} must be a point of lrs")
        for m in self.methods:
            check_method(m.kind, self.K, m.histories)
        spent = {m.name: queries_per_iteration(m.kind, self.K) for m in self.methods}
        if len(set(spent.values())) > 1:  # scd at an even K spends K - 1: the comparison must be at equal queries
            raise ValueError(f"every method must spend the same queries per iteration, got {spent} at K = {self.K}")
        return self


class Params(BaseParams):
    seed: int = Field(ge=0)
    hessian: HessianStudy
    optimisation: Optimisation
    decide_claims: bool
    device: str = "cpu"

    @model_validator(mode="after")
    def _claimed(self):
        missing = [e for e in CLAIM_ESTIMATORS if e not in self.hessian.estimators]
        missing += [m for m in CLAIM_METHODS if m not in [x.name for x in self.optimisation.methods]]
        if missing:
            raise ValueError(f"the claims need {missing}")
        return self
