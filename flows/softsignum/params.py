"""SoftSignum's typed params: one profile of stages/softsignum/params.yaml."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, model_validator

from tasks.core.params import Params as BaseParams
from tasks.train.lr_grid import check_grid, check_same_shape

from .variants import HARDSWITCH_SCALED, base_of, hardswitch_control


def _known_optimizers(names: list[str]) -> list[str]:
    for name in names:
        base_of(name)  # raises with the allowed names
    if len(set(names)) != len(names):
        raise ValueError(f"optimizers: each name once, got {names}")
    return names


QUAD_HET_BASES = ("signum", "softsignum", "hardswitch")
Optimizers = Annotated[list[str], Field(min_length=1), AfterValidator(_known_optimizers)]


def _check_controls(names: list[str], tau_max: float, where: str) -> None:
    """A hardswitch_x<k> control is HardSwitch x tau_max of its task: k must be the task's tau_max."""
    for name in names:
        if HARDSWITCH_SCALED.match(name) and name != hardswitch_control(tau_max):
            raise ValueError(f"{where}.optimizers: the HardSwitch control is {hardswitch_control(tau_max)} "
                             f"(x tau_max = {tau_max:g}), got {name!r}")


class QuadHet(BaseParams):
    d: int = Field(ge=1)
    steps: int = Field(ge=1)
    lr: float = Field(gt=0)
    momentum: float = Field(ge=0, lt=1)
    dampening: float = Field(ge=0, le=1)
    noise_std: float = Field(ge=0)
    tau_max: float = Field(ge=1)  # SoftSignum's clamp (the official default 20)
    optimizers: Optimizers
    seeds: int = Field(ge=1)

    @model_validator(mode="after")
    def _controls(self):
        vector = [name for name in self.optimizers if base_of(name) not in QUAD_HET_BASES]
        if vector:
            raise ValueError(f"quad_het.optimizers: the vector task runs {', '.join(QUAD_HET_BASES)} and their "
                             f"controls, got {vector}")
        _check_controls(self.optimizers, self.tau_max, "quad_het")
        return self


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
    tau_max: float = Field(ge=1)  # SoftSignum's clamp (the official default 20); SoftMuon keeps its 1e9
    soft_mode: Literal["exact", "iterative"]
    optimizers: Optimizers
    seeds: int = Field(ge=1)

    @model_validator(mode="after")
    def _controls(self):
        _check_controls(self.optimizers, self.tau_max, "charlm")
        return self


Grid = Annotated[list[float], AfterValidator(check_grid)]


class Calibration(BaseParams):
    """LR grids on the char-LM, seed 0, widened at an edge by tasks.train.lr_grid (spec: 3 points, 200 steps;
    smoke: one point each, a pass-through). Every grid has the same number of points; Lion's is needed only when
    Lion runs."""

    steps: int = Field(ge=1)
    signum: Grid
    muon: Grid
    adamw: Grid
    lion: Grid | None = None

    def grids(self) -> dict[str, list[float]]:
        """method -> its initial grid, for the methods that have one."""
        return {name: grid for name in ("signum", "muon", "adamw", "lion") if (grid := getattr(self, name)) is not None}

    @model_validator(mode="after")
    def _same_shape(self):
        check_same_shape(self.grids())
        return self


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

    @model_validator(mode="after")
    def _lion_is_calibrated(self):
        if "lion" in self.charlm.optimizers and self.calibration.lion is None:
            raise ValueError("calibration.lion: Lion runs on the char-LM, so it needs an LR grid like every method")
        return self
