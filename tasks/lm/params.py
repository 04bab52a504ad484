"""The typed architecture params of a tiny LM as the LM papers' params.yaml give it (`TinyLMConfig(**p.model_dump())`
builds it); pydantic only, so a stage validates its params without importing transformers."""
from __future__ import annotations

from typing import Literal

from pydantic import Field

from tasks.core.params import Params


class TinyLMParams(Params):
    d_model: int = Field(ge=1)
    n_layers: int = Field(ge=1)
    n_heads: int = Field(ge=1)
    context: int = Field(ge=8)
    arch: Literal["gpt2", "llama"] = "gpt2"
