"""The typed params of lambda_grpo: one profile of stages/lambda_grpo/params.yaml."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from tasks.core.params import Params as BaseParams
from tasks.lm.chain_arith import max_completion_length
from tasks.lm.params import TinyLMParams

Positive = Annotated[float, Field(gt=0)]


class TaskParams(BaseParams):
    """Chain arithmetic: chain length K in [k_min, k_max], fixed validation / test sets, noisy SFT traces."""

    k_min: int = Field(ge=1)
    k_max: int = Field(ge=1, le=32)
    val_size: int = Field(ge=1, le=100_000)
    test_size: int = Field(ge=1, le=100_000)
    sft_traces: int = Field(ge=1, le=2_000_000)
    p_err: float = Field(ge=0, lt=1)


class SFTParams(BaseParams):
    steps: int = Field(ge=1)
    batch: int = Field(ge=1)
    lr: Positive


class RLParams(BaseParams):
    """Identical for both methods. The first of group_sizes, lrs and aggregations is the primary setting the
    claims C3, C4 judge; the others (full profile) are reported beside it."""

    steps: int = Field(ge=1)
    prompts_per_step: int = Field(ge=1)
    group_sizes: list[Annotated[int, Field(ge=2)]] = Field(min_length=1)
    lrs: list[Positive] = Field(min_length=1)
    aggregations: list[Literal["sequence", "token"]] = Field(min_length=1)
    temperature: Positive
    eval_every: int = Field(ge=1)
    eval_samples: int = Field(ge=1)


class Params(BaseParams):
    seed: int = Field(ge=0)
    seeds: int = Field(ge=1)
    task: TaskParams
    model: TinyLMParams
    sft: SFTParams
    rl: RLParams
    c1_groups: int = Field(ge=1)
    decide_claims: bool
    device: str = "auto"

    @model_validator(mode="after")
    def _consistent(self):
        if self.task.k_min > self.task.k_max:
            raise ValueError(f"task.k_min: must be <= task.k_max = {self.task.k_max}, got {self.task.k_min}")
        longest = 2 * self.task.k_max + 3 + max_completion_length(self.task.k_max)
        if self.model.context < longest:
            raise ValueError(f"model.context: must hold the longest prompt + completion ({longest} tokens for "
                             f"k_max = {self.task.k_max}), got {self.model.context}")
        if self.model.d_model % self.model.n_heads:
            raise ValueError(f"model.n_heads: must divide model.d_model = {self.model.d_model}, got {self.model.n_heads}")
        return self
