"""The stdlib char-LM training task: a tiny decoder-only Transformer and its one runner.

Pre-LN blocks, GELU MLP, learned positions, untied embedding and head, causal attention, no
dropout (so a forward pass is a deterministic function of weights and batch, which the closure
convention of the optimizers relies on). ~117k parameters at the default config.

`train_charlm` is the one way every paper trains it, so "Muon on the char-LM" is the same run in every paper:
weights from derive_seed(seed, "model"), batches from derive_seed(seed, "charlm-batches"), cosine decay to
lr_floor, validation on the first `eval_windows` windows of the validation text.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import torch
import torch.nn.functional as F
from pydantic import Field, model_validator
from torch import nn

from tasks.core.params import Params
from tasks.core.seeding import derive_seed
from tasks.train.corpus import CharCorpus
from tasks.train.loop import TrainResult, cosine_factor, run_training


class CharLMConfig(Params):
    vocab_size: int = Field(default=98, ge=1)
    context: int = Field(default=64, ge=1)
    d_model: int = Field(default=64, ge=1)
    n_heads: int = Field(default=4, ge=1)
    n_layers: int = Field(default=2, ge=1)
    mlp_ratio: int = Field(default=4, ge=1)

    @model_validator(mode="after")
    def _heads_divide_width(self):
        if self.d_model % self.n_heads:
            raise ValueError(f"n_heads: must divide d_model={self.d_model}, got {self.n_heads!r}")
        return self


class CausalSelfAttention(nn.Module):
    def __init__(self, config: CharLMConfig):
        super().__init__()
        self.n_heads = config.n_heads
        # separate q, k, v matrices (not one fused qkv): Muon-family optimizers orthogonalise each
        # d_model x d_model matrix on its own, and optimizer state is counted per matrix
        self.q = nn.Linear(config.d_model, config.d_model)
        self.k = nn.Linear(config.d_model, config.d_model)
        self.v = nn.Linear(config.d_model, config.d_model)
        self.out = nn.Linear(config.d_model, config.d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        heads = (B, T, self.n_heads, C // self.n_heads)
        q, k, v = (proj(x).view(heads).transpose(1, 2) for proj in (self.q, self.k, self.v))  # [B, H, T, C/H]
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(y.transpose(1, 2).reshape(B, T, C))


class MLPBlock(nn.Module):
    def __init__(self, config: CharLMConfig):
        super().__init__()
        self.fc = nn.Linear(config.d_model, config.mlp_ratio * config.d_model)
        self.proj = nn.Linear(config.mlp_ratio * config.d_model, config.d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(F.gelu(self.fc(x)))


class Block(nn.Module):
    def __init__(self, config: CharLMConfig):
        super().__init__()
        self.ln1 = nn.LayerNorm(config.d_model)
        self.attn = CausalSelfAttention(config)
        self.ln2 = nn.LayerNorm(config.d_model)
        self.mlp = MLPBlock(config)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class CharTransformer(nn.Module):
    """forward(idx [B, T] int64) -> logits [B, T, vocab]. Weights are drawn from `seed` alone
    (N(0, 0.02), residual projections scaled by 1/sqrt(2 n_layers) as in GPT-2; biases zero)."""

    def __init__(self, config: CharLMConfig | None = None, seed: int = 0):
        super().__init__()
        self.config = config = config or CharLMConfig()
        self.tok_emb = nn.Embedding(config.vocab_size, config.d_model)
        self.pos_emb = nn.Embedding(config.context, config.d_model)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.n_layers))
        self.ln_f = nn.LayerNorm(config.d_model)
        self.head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self._init_weights(torch.Generator().manual_seed(seed))

    def _init_weights(self, generator: torch.Generator) -> None:
        residual_std = 0.02 / math.sqrt(2 * self.config.n_layers)
        for name, p in self.named_parameters():
            if name.endswith("bias"):
                nn.init.zeros_(p)
            elif ".ln" in name or name.startswith("ln_"):
                nn.init.ones_(p)
            else:
                std = residual_std if name.endswith(("out.weight", "proj.weight")) else 0.02
                nn.init.normal_(p, 0.0, std, generator=generator)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        T = idx.shape[1]
        if T > self.config.context:
            raise ValueError(f"sequence length {T} exceeds the model's context {self.config.context}")
        x = self.tok_emb(idx) + self.pos_emb(torch.arange(T, device=idx.device))  # [B, T, C]
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))  # [B, T, V]


def split_matrix_params(model: nn.Module) -> tuple[list[nn.Parameter], list[nn.Parameter]]:
    """(hidden 2-D matrices of the blocks: q, k, v, out, MLP weights -> Muon-family optimizers;
    everything else: embeddings, head, biases, norms -> the auxiliary AdamW)."""
    matrices, others = [], []
    for name, p in model.named_parameters():
        (matrices if name.startswith("blocks.") and p.ndim == 2 else others).append(p)
    return matrices, others


def random_windows(data: torch.Tensor, context: int, batch: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """`batch` windows at uniform random starts: inputs x [batch, context] and next characters y."""
    if len(data) < context + 1:
        raise ValueError(f"context: needs at least context+1={context + 1} characters of data, got {len(data)}")
    starts = torch.randint(0, len(data) - context, (batch,), generator=generator)
    rows = starts[:, None] + torch.arange(context + 1)
    windows = data[rows]
    return windows[:, :-1], windows[:, 1:]


@torch.no_grad()
def evaluate_charlm(model: CharTransformer, data: torch.Tensor, context: int, max_windows: int = 256,
                    batch: int = 64) -> dict:
    """Mean cross-entropy (nats/char), character accuracy and perplexity on the first `max_windows`
    non-overlapping windows of `data` (fixed, so every evaluation sees the same characters)."""
    n_windows = min(max_windows, (len(data) - 1) // context)
    if n_windows < 1:
        raise ValueError(f"data: needs at least context+1={context + 1} characters to evaluate, got {len(data)}")
    device = next(model.parameters()).device
    starts = torch.arange(n_windows) * context
    was_training = model.training
    model.eval()
    total_loss, correct, count = 0.0, 0, 0
    for chunk in starts.split(batch):
        windows = data[chunk[:, None] + torch.arange(context + 1)].to(device)
        x, y = windows[:, :-1], windows[:, 1:]
        logits = model(x)
        total_loss += F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1), reduction="sum").item()
        correct += (logits.argmax(-1) == y).sum().item()
        count += y.numel()
    model.train(was_training)
    loss = total_loss / count
    return {"loss": loss, "accuracy": correct / count, "perplexity": math.exp(loss)}


@dataclass(frozen=True)
class CharLMSetting:
    """One char-LM training budget: `steps` of `batch` windows, evaluated every `eval_every` steps (0: only at
    the end) on the first `eval_windows` validation windows; on_nonfinite="stop" ends a diverging run (LR
    grids) instead of raising."""

    steps: int
    batch: int
    eval_every: int
    eval_windows: int
    lr_floor: float = 0.1
    config: CharLMConfig = field(default_factory=CharLMConfig)
    device: str = "cpu"
    on_nonfinite: Literal["raise", "stop"] = "raise"


@dataclass
class CharLMRun:
    """The trained model, its optimizer and parameter split, and the loop's result."""

    model: CharTransformer
    optimizer: torch.optim.Optimizer
    matrices: list[nn.Parameter]
    others: list[nn.Parameter]
    result: TrainResult


def train_charlm(corpus: CharCorpus, make_optimizer: Callable[[list, list], torch.optim.Optimizer], seed: int,
                 setting: CharLMSetting) -> CharLMRun:
    """Train the Transformer from the seed's initialisation with make_optimizer(matrices, others) (hidden
    matrices of the blocks, everything else: tasks.optim.registry.optimizer_factory gives one). Batches depend
    on the seed alone, so a run with more steps sees the shorter run's batches first."""
    model = CharTransformer(setting.config, seed=derive_seed(seed, "model")).to(setting.device)
    matrices, others = split_matrix_params(model)
    optimizer = make_optimizer(matrices, others)
    windows = torch.Generator().manual_seed(derive_seed(seed, "charlm-batches"))
    context, device = setting.config.context, setting.device
    val = corpus.val.to(device)

    def next_batch(i: int):
        x, y = random_windows(corpus.train, context, setting.batch, windows)
        return x.to(device), y.to(device)

    def loss_on_batch(batch) -> torch.Tensor:
        x, y = batch
        logits = model(x)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))

    result = run_training(optimizer, loss_on_batch, next_batch, setting.steps,
                          evaluate=lambda: evaluate_charlm(model, val, context, max_windows=setting.eval_windows),
                          eval_every=setting.eval_every, lr_factor=cosine_factor(setting.steps, setting.lr_floor),
                          on_nonfinite=setting.on_nonfinite)
    return CharLMRun(model, optimizer, matrices, others, result)
