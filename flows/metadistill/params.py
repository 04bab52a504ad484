"""The typed params of metadistill: one profile of stages/metadistill/params.yaml."""
from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from tasks.blackbox.bbob import BBOB_FUNCTIONS
from tasks.blackbox.experts import EXPERTS
from tasks.core.params import Params as BaseParams

from .functions import TRAINING_FUNCTIONS


class StudentParams(BaseParams):
    """LES's sizes; one sigma_init for the baseline and the distilled student (same network, spec §11)."""

    att_dim: int = Field(ge=1)
    mlp_dim: int = Field(ge=1)
    sigma_init: float = Field(gt=0)


class KnowledgeParams(BaseParams):
    dim: int = Field(ge=2)
    popsize: int = Field(ge=4)
    generations: int = Field(ge=1)
    interval: int = Field(ge=1)
    episodes: int = Field(ge=1)  # x 5 training functions = stitched trajectories
    teachers: list[Literal[tuple(EXPERTS)]] = Field(min_length=1)


class DistillParams(BaseParams):
    epochs: int = Field(ge=1)
    lr: float = Field(gt=0)
    weight_decay: float = Field(ge=0)
    clip: float = Field(gt=0)
    warmup: int = Field(ge=0)


class MetaParams(BaseParams):
    """The baseline's outer CMA-ES; inner runs use the knowledge base's dim, popsize and generations."""

    popsize: int = Field(ge=2)
    epochs: int = Field(ge=1)
    sigma0: float = Field(gt=0)


class EvalParams(BaseParams):
    functions: list[int] = Field(min_length=1)
    dims: list[int] = Field(min_length=1)
    seeds: int = Field(ge=1)  # seed k runs IOH instance k + 1
    popsize: int = Field(ge=4)
    budget: int = Field(ge=8)
    ssft_js: list[int] = Field(min_length=1)  # md_jJ variants; 0 is md_j0
    ssft_lr: float = Field(ge=0)

    @model_validator(mode="after")
    def _check(self):
        bad = [f for f in self.functions if f not in BBOB_FUNCTIONS]
        if bad:
            raise ValueError(f"functions: BBOB ids are 1..24, got {bad}")
        if self.budget < 2 * self.popsize:
            raise ValueError(f"budget: must hold at least two populations of {self.popsize}, got {self.budget}")
        if 0 not in self.ssft_js or min(self.ssft_js) < 0:
            raise ValueError(f"ssft_js: must include 0 (md_j0) and be >= 0, got {self.ssft_js}")
        return self


class ControlParams(BaseParams):
    """Claim C3's neuroevolution on Acrobot-v1: an MLP 6-`hidden`-3 policy, `populations` populations of
    `popsize` (the initial one included) per optimiser, one episode of at most `steps` steps per evaluation."""

    hidden: int = Field(ge=1)
    popsize: int = Field(ge=4)
    populations: int = Field(ge=2)
    steps: int = Field(ge=1)
    seeds: int = Field(ge=2)  # C3's interval resamples the seeds


class Params(BaseParams):
    seed: int = Field(ge=0)
    student: StudentParams
    knowledge: KnowledgeParams
    distill: DistillParams
    meta: MetaParams
    evaluation: EvalParams
    control: ControlParams
    decide_claims: bool
    device: str = "cpu"


TRAINING = tuple(TRAINING_FUNCTIONS)
