"""SoftSignum's typed params: one profile of stages/softsignum/params.yaml."""
from __future__ import annotations

from typing import Literal

from pydantic import Field

from tasks.core.params import Params as BaseParams


class QuadHet(BaseParams):
    d: int = Field(ge=1)
    steps: int = Field(ge=1)
    lr: float = Field(gt=0)
    momentum: float = Field(ge=0, lt=1)
    dampening: float = Field(ge=0, le=1)
    noise_std: float = Field(ge=0)
    tau_max: float = Field(ge=1)
    seeds: int = Field(ge=1)


class MatHet(BaseParams):
    m: int = Field(ge=1)
    n: int = Field(ge=1)
    n_samples: int = Field(ge=1)
    sigma: float = Field(ge=0)
    batch: int = Field(ge=1)
    steps: int = Field(ge=1)
    lr: float = Field(gt=0)
    momentum: float = Field(ge=0, lt=1)
    eval_every: int = Field(ge=1)
    seeds: int = Field(ge=1)


class CharLM(BaseParams):
    n_chars: int = Field(ge=1000)
    steps: int = Field(ge=1)
    batch: int = Field(ge=1)
    context: int = Field(ge=2)
    d_model: int = Field(ge=4)
    n_heads: int = Field(ge=1)
    n_layers: int = Field(ge=1)
    eval_every: int = Field(ge=1)
    eval_windows: int = Field(ge=1)
    lr_floor: float = Field(ge=0, le=1)
    sign_momentum: float = Field(ge=0, lt=1)
    muon_momentum: float = Field(ge=0, lt=1)
    aux_lr: float = Field(gt=0)
    lion_lr: float = Field(gt=0)
    soft_mode: Literal["exact", "iterative"]
    optimizers: list[Literal["signum", "softsignum", "hardswitch", "muon", "softmuon", "adamw", "lion"]] = Field(min_length=1)
    seeds: int = Field(ge=1)


class Calibration(BaseParams):
    """LR grids on the char-LM, seed 0 (spec: 3 points, 200 steps; smoke: one point each, a pass-through)."""

    steps: int = Field(ge=1)
    signum: list[float] = Field(min_length=1)
    muon: list[float] = Field(min_length=1)
    adamw: list[float] = Field(min_length=1)


class Params(BaseParams):
    seed: int = Field(ge=0)
    alpha_sign: float = Field(ge=0, le=1)
    eps: float = Field(gt=0, lt=1)
    quad_het: QuadHet
    mat_het: MatHet
    charlm: CharLM
    calibration: Calibration
    decide_claims: bool
    device: str = "auto"
