"""LiMuon's typed params: one profile of stages/limuon/params.yaml."""
from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field

from tasks.core.params import Params as BaseParams

from .variants import parse_variant


def _known_variants(names: list[str]) -> list[str]:
    for name in names:
        parse_variant(name)  # raises with the allowed names
    return names


Variants = Annotated[list[str], Field(min_length=1), AfterValidator(_known_variants)]


class Shared(BaseParams):
    """Muon's hyperparameters, reused by every LiMuon variant (spec §3.2: LiMuon is not tuned separately)."""

    momentum: float = Field(ge=0, lt=1)
    nesterov: bool
    weight_decay: float = Field(ge=0)
    beta: float = Field(gt=0, le=1)
    oversampling: int = Field(ge=0)
    orthogonalizer: str = Field(pattern="^(svd|ns5)$")
    clip: float = Field(gt=0)


class MatLs(BaseParams):
    m: int = Field(ge=1)
    n: int = Field(ge=1)
    n_samples: int = Field(ge=1)
    sigmas: list[float] = Field(min_length=1)
    steps: int = Field(ge=1)
    batch: int = Field(ge=1)
    lr: float = Field(gt=0)
    optimizers: Variants
    shared: Shared


class CharLM(BaseParams):
    n_chars: int = Field(ge=1000)
    d_model: int = Field(ge=4)
    n_heads: int = Field(ge=1)
    n_layers: int = Field(ge=1)
    context: int = Field(ge=2)
    steps: int = Field(ge=1)
    batch: int = Field(ge=1)
    eval_every: int = Field(ge=0)
    eval_windows: int = Field(ge=1)
    aux_lr: float = Field(gt=0)
    adamw_lr: float = Field(gt=0)
    optimizers: Variants
    shared: Shared


class Calibration(BaseParams):
    """Muon LR grid on the char-LM, `steps` steps at `seed` (smoke: one point, a pass-through)."""

    lr_grid: list[float] = Field(min_length=1)
    steps: int = Field(ge=1)
    seed: int = Field(ge=0)


class Params(BaseParams):
    seeds: list[int] = Field(min_length=1)
    mat_ls: MatLs
    charlm: CharLM
    calibration: Calibration
    decide_claims: bool
    device: str = "auto"
