"""LiMuon's typed params: one profile of stages/limuon/params.yaml."""
from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field, model_validator

from tasks.core.params import Params as BaseParams
from tasks.train.lr_grid import check_grid, check_same_shape

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
    optimizers: Variants
    shared: Shared


Grid = Annotated[list[float], AfterValidator(check_grid)]


class Calibration(BaseParams):
    """LR grids on the char-LM, `steps` steps at `seed`, widened at an edge by tasks.train.lr_grid: Muon's (every
    LiMuon variant and Muon-2x reuse it) and AdamW's (needed only when AdamW runs). Every grid has the same number
    of points; smoke: one point, a pass-through."""

    muon: Grid
    adamw: Grid | None = None
    steps: int = Field(ge=1)
    seed: int = Field(ge=0)

    def grids(self) -> dict[str, list[float]]:
        """method -> its initial grid, for the methods that have one."""
        return {name: grid for name in ("muon", "adamw") if (grid := getattr(self, name)) is not None}

    @model_validator(mode="after")
    def _same_shape(self):
        check_same_shape(self.grids())
        return self


class Params(BaseParams):
    seeds: list[int] = Field(min_length=1)
    mat_ls: MatLs
    charlm: CharLM
    calibration: Calibration
    decide_claims: bool
    device: str = "auto"

    @model_validator(mode="after")
    def _adamw_is_calibrated(self):
        adamw = [name for name in self.charlm.optimizers if parse_variant(name).family == "adamw"]
        if adamw and self.calibration.adamw is None:
            raise ValueError("calibration.adamw: AdamW runs on the char-LM, so it needs an LR grid like Muon")
        return self
