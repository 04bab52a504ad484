"""The typed params of balora: one profile of stages/balora/params.yaml."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from tasks.core.params import Params as BaseParams
from tasks.lm.params import TinyLMParams

Positive = Annotated[float, Field(gt=0)]
Method = Literal["lora", "balora", "balora_aligned"]  # balora_lapack is for the tests' re-basing check only


class LrGrid(BaseParams):
    """`num` learning rates from start to stop, linearly ("lin") or geometrically ("geom") spaced."""

    start: Positive
    stop: Positive
    num: int = Field(ge=1, le=1000)
    spacing: Literal["lin", "geom"]


class SyntheticParams(BaseParams):
    """Testbed A: 1/2 ||W0 + A B - T||^2, W0, T ~ N(0, 1) of size a x b, LoRA init A = 0, B ~ N(0, 1)."""

    a: int = Field(ge=1, le=2000)
    b: int = Field(ge=1, le=2000)
    r: int = Field(ge=1)
    inits: int = Field(ge=1, le=1000)
    steps: int = Field(ge=1, le=100_000)
    sign_lrs: LrGrid
    gd_lrs: LrGrid

    @model_validator(mode="after")
    def _rank(self):
        if self.r >= min(self.a, self.b):
            raise ValueError(f"r: must be below min(a, b) = {min(self.a, self.b)}, got {self.r}")
        return self


class ConditioningParams(BaseParams):
    """Testbed B: sign descent with step lr * decay**t from each init, then the Hessian at the end point."""

    inits: int = Field(ge=1, le=1000)
    steps: int = Field(ge=1, le=100_000)
    lr: Positive
    decay: float = Field(gt=0, le=1)


class CorpusParams(BaseParams):
    pretrain_chars: int = Field(ge=1000, le=50_000_000)
    finetune_chars: int = Field(ge=1000, le=10_000_000)


class PretrainParams(BaseParams):
    steps: int = Field(ge=1)
    batch: int = Field(ge=1)
    lr: Positive


class FinetuneParams(BaseParams):
    """Testbed C: every method over the grid lrs x scales at seed 0, then `best_seeds` seeds at its best point."""

    rank: int = Field(ge=1)
    steps: int = Field(ge=1)
    batch: int = Field(ge=1)
    eval_every: int = Field(ge=1)
    eval_windows: int = Field(ge=1)
    lrs: list[Positive] = Field(min_length=1)
    scales: list[Positive] = Field(min_length=1)
    best_seeds: int = Field(ge=1)
    methods: list[Method] = Field(min_length=1)

    @model_validator(mode="after")
    def _baseline(self):
        if not {"lora", "balora"} <= set(self.methods):
            raise ValueError(f"methods: must include lora and balora (the claims compare them), got {self.methods}")
        return self


class TimingParams(BaseParams):
    """C4: every method stepping alternately in one process from copies of a seeded `model` (larger than testbed C's,
    so that a step is not dominated by fixed per-call costs), `steps` timed steps per repeat, `repeats` repeats."""

    model: TinyLMParams
    batch: int = Field(ge=1)
    steps: int = Field(ge=1, le=10_000)
    repeats: int = Field(ge=1, le=1000)


class Params(BaseParams):
    seed: int = Field(ge=0)
    synthetic: SyntheticParams
    conditioning: ConditioningParams
    corpus: CorpusParams
    model: TinyLMParams
    pretrain: PretrainParams
    finetune: FinetuneParams
    timing: TimingParams
    decide_claims: bool
    device: str = "cpu"
