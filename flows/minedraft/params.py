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
    """The parallel-efficiency probe: `repeats` tanh(A A / n) products of n x n matrices per worker, alone and at once."""

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
    # the references with no gate (AR-1c, SD-2c) run in the first `reference_repeats` repeats only, SD-2c at
    # `control_ks` only (all ks when absent): two intra-op threads on a shared 2-core host are the slowest runs
    reference_repeats: int = Field(ge=1)
    control_ks: list[int] | None = None
    temperature: float = Field(gt=0)
    calibrate_repeats: int = Field(ge=1)
    probe: ProbeParams
    sampler_draws: int = Field(ge=1000)  # C1's sampling check
    decide_claims: bool
    gpu_variants: bool = False  # PSD-gpu+cpu and PSD-2stream beside SD-gpu (flows/minedraft/gpu.py), where CUDA is
    device: str = "cpu"

    @model_validator(mode="after")
    def _fits(self):
        for name in ("target", "drafter"):
            if self.prompt_len + self.max_new + max(self.ks) > getattr(self, name).context:
                raise ValueError(f"{name}.context: prompt_len + max_new + max(ks) must fit it")
        if min(self.ks) < 1:
            raise ValueError(f"ks: draft lengths must be >= 1, got {self.ks}")
        if self.control_ks is not None and not set(self.control_ks) <= set(self.ks):
            raise ValueError(f"control_ks: must be among ks {self.ks}, got {self.control_ks}")
        if self.reference_repeats > self.repeats:
            raise ValueError(f"reference_repeats: at most repeats ({self.repeats}), got {self.reference_repeats}")
        return self
