"""The typed params of ncrs: one profile of stages/ncrs/params.yaml."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from tasks.core.params import Params as BaseParams

Positive = Annotated[float, Field(gt=0)]
Margin = Annotated[float, Field(ge=0, le=0.5)]
Dim = Annotated[int, Field(ge=1, le=100_000)]


class UniformMargin(BaseParams):
    """C1/C2: NCRS and dueling NGD under the uniform-margin oracle at each (d, p); each step picked from `alphas` on
    `calibration_seeds` instances (seeds 100...), then frozen for the `seeds` evaluation instances."""

    dims: list[Dim] = Field(min_length=2)
    margins: list[Margin] = Field(min_length=1)
    alphas: list[Positive] = Field(min_length=1)
    budget: int = Field(ge=1)
    seeds: int = Field(ge=1)
    calibration_seeds: int = Field(ge=1)
    ngd_nu: Positive


class Libraries(BaseParams):
    """The library baselines at p = `margin`: CMA-ES (`cma`) on comparison ranks, sigma0 picked from `sigmas` as the
    steps are; nevergrad's OnePlusOne on exact values (its own default step)."""

    margin: Margin
    seeds: int = Field(ge=1)
    sigmas: list[Positive] = Field(min_length=1)


class GapOracles(BaseParams):
    """C3: single vote against `votes` (odd) majority votes at d, alpha fixed, under each gap-dependent oracle."""

    dim: Dim
    oracles: list[Literal["sqrt_gap", "bradley_terry"]] = Field(min_length=1)
    votes: int = Field(ge=3)
    alpha: Positive
    budget: int = Field(ge=1)
    seeds: int = Field(ge=1)
    p_max: Annotated[float, Field(gt=0, le=0.5)]
    kappa: Positive
    tau: Positive
    epsilon: Positive


class KScaling(BaseParams):
    """Report: N(k) at d for each intrinsic dimension k, z0 of fixed norm, at p, the step calibrated on the grid."""

    dim: Dim
    ks: list[Annotated[int, Field(ge=1)]] = Field(min_length=2)
    margin: Margin
    budget: int = Field(ge=1)
    seeds: int = Field(ge=1)
    z0_norm: Positive


class Params(BaseParams):
    seed: int = Field(ge=0)
    k: int = Field(ge=1)  # intrinsic dimension of C1-C3
    epsilon: Positive  # target gradient norm of N(d)
    z0_scale: Positive  # z0 = z0_scale * N(0, I_k)
    margin: UniformMargin
    libraries: Libraries
    gap_oracles: GapOracles
    k_scaling: KScaling
    decide_claims: bool
