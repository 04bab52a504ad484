"""Tiny causal LMs built from a `transformers` config, initialised from a seed (no download).

GPT-2 ("gpt2": learned positions, pre-LN, GELU MLP 4x) or Llama ("llama": RoPE, RMSNorm, SwiGLU). Dropout is
off, so a forward pass is a deterministic function of weights and batch. Saved with `save_pretrained`
(safetensors) and loaded with `from_pretrained`, so any transformers/peft/TRL code can open the folder.
"""
from __future__ import annotations

from pathlib import Path
from typing import Literal

import torch
from pydantic import Field, model_validator
from transformers.utils import logging as hf_logging
from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM, PreTrainedModel

from tasks.core.params import Params

from .vocab import TokenVocab


class TinyLMConfig(Params):
    """Architecture of a tiny causal LM; `context` is the longest prompt + completion it accepts."""

    d_model: int = Field(default=64, ge=1)
    n_layers: int = Field(default=2, ge=1)
    n_heads: int = Field(default=4, ge=1)
    context: int = Field(default=32, ge=1)
    arch: Literal["gpt2", "llama"] = "gpt2"

    @model_validator(mode="after")
    def _heads_divide_width(self):
        if self.d_model % self.n_heads:
            raise ValueError(f"n_heads: must divide d_model={self.d_model}, got {self.n_heads!r}")
        return self


def hf_config(config: TinyLMConfig, vocab: TokenVocab):
    special = {"bos_token_id": vocab.bos, "eos_token_id": vocab.eos, "pad_token_id": vocab.pad}
    if config.arch == "gpt2":
        return GPT2Config(vocab_size=vocab.size, n_positions=config.context, n_embd=config.d_model,
                          n_layer=config.n_layers, n_head=config.n_heads, activation_function="gelu",
                          resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, **special)
    return LlamaConfig(vocab_size=vocab.size, max_position_embeddings=config.context, hidden_size=config.d_model,
                       intermediate_size=4 * config.d_model, num_hidden_layers=config.n_layers,
                       num_attention_heads=config.n_heads, num_key_value_heads=config.n_heads,
                       tie_word_embeddings=True, attention_dropout=0.0, **special)


def build_model(config: TinyLMConfig, vocab: TokenVocab, seed: int) -> PreTrainedModel:
    """A freshly initialised model: the weights depend on `seed` alone (the global RNG is left untouched)."""
    model_class = GPT2LMHeadModel if config.arch == "gpt2" else LlamaForCausalLM
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = model_class(hf_config(config, vocab))
    return model.eval()


def num_parameters(model: torch.nn.Module) -> int:
    """Distinct trainable parameters (tied embeddings count once)."""
    return sum(p.numel() for p in model.parameters())


def save_model(model: PreTrainedModel, folder: Path, vocab: TokenVocab, config: TinyLMConfig) -> Path:
    """`save_pretrained` (safetensors) plus the vocabulary and TinyLMConfig in `tiny_lm.json`."""
    import json

    folder = Path(folder)
    model.save_pretrained(folder, safe_serialization=True)
    (folder / "tiny_lm.json").write_text(json.dumps({"symbols": list(vocab.symbols), "config": config.model_dump()}, indent=1))
    return folder


def load_model(folder: Path, dtype: torch.dtype = torch.float32) -> tuple[PreTrainedModel, TokenVocab, TinyLMConfig]:
    """The model saved by `save_model` (in eval mode), its vocabulary and config."""
    import json

    folder = Path(folder)
    meta = json.loads((folder / "tiny_lm.json").read_text())
    config = TinyLMConfig(**meta["config"])
    model_class = GPT2LMHeadModel if config.arch == "gpt2" else LlamaForCausalLM
    hf_logging.disable_progress_bar()  # a "Loading weights" bar per tiny model only clutters stage logs
    try:
        model = model_class.from_pretrained(folder, dtype=dtype)
    finally:
        hf_logging.enable_progress_bar()
    return model.eval(), TokenVocab(tuple(meta["symbols"])), config
