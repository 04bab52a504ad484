"""The typed params of minedraft: one profile of stages/minedraft/params.yaml."""
from __future__ import annotations

from pydantic import Field, model_validator

from tasks.core.params import Params as BaseParams
from tasks.lm.params import TinyLMParams


class TrainParams(BaseParams):
    steps: int = Field(ge=1)
    batch: int = Field(ge=1)
    lr: float = Field(gt=0)


class ProbeParams(BaseParams):
    """The parallel-efficiency probe: `repeats` tanh(A A / n) products of n x n matrices per core."""

    size: int = Field(ge=8, le=4096)
    repeats: int = Field(ge=1)


class Params(BaseParams):
    seed: int = Field(ge=0)
    corpus_chars: int = Field(ge=10_000)
    target: TinyLMParams
    drafter: TinyLMParams
    train: TrainParams
    prompts: int = Field(ge=1)  # P
    prompt_len: int = Field(ge=1)
    max_new: int = Field(ge=1)  # N
    batch: int = Field(ge=2)  # B, two halves in PSD
    ks: list[int] = Field(min_length=1)
    repeats: int = Field(ge=1)
    temperature: float = Field(gt=0)
    calibrate_repeats: int = Field(ge=1)
    probe: ProbeParams
    sampler_draws: int = Field(ge=1000)  # C1's sampling check
    decide_claims: bool
    device: str = "cpu"

    @model_validator(mode="after")
    def _fits(self):
        for name in ("target", "drafter"):
            if self.prompt_len + self.max_new + max(self.ks) > getattr(self, name).context:
                raise ValueError(f"{name}.context: prompt_len + max_new + max(ks) must fit it")
        if min(self.ks) < 1:
            raise ValueError(f"ks: draft lengths must be >= 1, got {self.ks}")
        return self
