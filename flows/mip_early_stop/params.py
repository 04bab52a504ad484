"""The typed params of mip_early_stop: one profile of stages/mip_early_stop/params.yaml."""
from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from tasks.core.params import Params as BaseParams
from tasks.mip import generators


class Family(BaseParams):
    """One instance family: generator size keys, split sizes, the loss scale eps_a (None: the
    spec's max(1e-3 median |U_final|, 1))."""

    name: Literal["mis", "gisp", "mvc", "cflp", "setcover", "cauction"]
    size: dict[str, int | float]
    train: int = Field(ge=1)
    cal: int = Field(ge=1)
    test: int = Field(ge=1)
    eps_a: float | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _size_keys_of_the_generator(self) -> Family:
        unknown = sorted(set(self.size) - set(generators.size_keys(self.name)))
        if unknown:
            raise ValueError(f"size: unknown key(s) {unknown} for {self.name} (allowed: {sorted(generators.size_keys(self.name))})")
        return self


class Network(BaseParams):
    hidden: int = Field(ge=1)
    layers: int = Field(ge=1)
    steps: int = Field(ge=1)
    batch: int = Field(ge=1)
    lr: float = Field(gt=0)


class Params(BaseParams):
    seed: int = Field(ge=0)
    families: list[Family] = Field(min_length=1)
    gap: float = Field(gt=0)
    time_limit: float = Field(gt=0)  # CPU seconds (SCIP's CPU clock), a backstop behind node_limit
    node_limit: int = Field(ge=1)  # B&B nodes per solve: a limit no machine or load changes
    sample_dt: float = Field(gt=0)
    alpha: float = Field(gt=0, lt=1)
    epsilon: float = Field(gt=0)
    quantile: Literal["finite", "numpy"]
    network: Network
    online_subset: int = Field(ge=1)  # the online re-solves also measure the inference cost
    coverage_splits: int = Field(ge=1)
    speed_ratio: float = Field(gt=0)
    min_coverage_fixed: float = Field(ge=0, le=1)
    min_coverage_mean: float = Field(ge=0, le=1)
    decide_claims: bool
    device: str = "auto"
