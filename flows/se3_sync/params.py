"""The typed params of se3_sync: one profile of stages/se3_sync/params.yaml."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator

from tasks.core.params import Params as BaseParams

Method = Literal["dqgpm", "dq_spectral", "eig", "chain"]
NonNegative = Annotated[float, Field(ge=0)]


class Additive(BaseParams):
    n: int = Field(ge=3)
    p: float = Field(gt=0, le=1)
    noise_levels: list[NonNegative] = Field(min_length=1)
    seeds: int = Field(ge=1)


class ScanParams(BaseParams):
    n_scans: int = Field(ge=3)
    n_pts: int = Field(ge=50)
    seeds: int = Field(ge=1)


class Timing(BaseParams):
    """C2 is measured on the grid claim_sizes x claim_p (one cell each, at noise); sizes x mean_degree give the
    time-vs-n curve on well-connected graphs, chain_sizes the curve on SLAM-like chains (odometry + loop_fraction x n
    loop closures, DQGPM from the spanning-tree start). EIG is timed at ARPACK's stock tol (0) and at eig_matched_tol.
    Every instance: `seeds` graphs x `repeats` rounds of the methods, alternated."""

    claim_sizes: list[Annotated[int, Field(ge=3)]] = Field(min_length=1)
    claim_p: list[Annotated[float, Field(gt=0, le=1)]] = Field(min_length=1)
    noise: NonNegative
    sizes: list[Annotated[int, Field(ge=3)]] = Field(min_length=1)
    mean_degree: float = Field(gt=0)
    chain_sizes: list[Annotated[int, Field(ge=4)]] = Field(default_factory=list)
    loop_fraction: NonNegative = 0.1
    eig_matched_tol: float = Field(gt=0, lt=1)
    seeds: int = Field(ge=1)
    repeats: int = Field(ge=1)


class Solver(BaseParams):
    """Per-node stopping tolerances (rotation: quaternion change; translation: change over the
    scene scale), see tasks/sync/dq_operator.py; power_tol stops DQGPM's power-method start."""

    rot_tol: float = Field(gt=0)
    trans_tol: float = Field(gt=0)
    max_iter: int = Field(ge=1)
    power_tol: float = Field(gt=0)
    power_max_iter: int = Field(ge=1)
    shift: float = 0.0
    engine: Literal["numba", "numpy"] = "numba"


class Params(BaseParams):
    """One profile of stages/se3_sync/params.yaml; the top-level n, p, noise_levels, seeds
    describe the primary `geometric` family."""

    seed: int = Field(ge=0)
    n: int = Field(ge=3)
    p: float = Field(gt=0, le=1)
    noise_levels: list[NonNegative] = Field(min_length=1)
    seeds: int = Field(ge=1)
    methods: list[Method] = Field(min_length=1)
    additive: Additive
    scans: ScanParams
    timing: Timing
    solver: Solver
    claim_ratio: float = Field(gt=0)
    decide_claims: bool

    @field_validator("methods")
    @classmethod
    def _claims_need_dqgpm_and_eig(cls, methods: list[str]) -> list[str]:
        if not {"dqgpm", "eig"} <= set(methods):
            raise ValueError("must include dqgpm and eig (the claims compare them)")
        return methods
