"""The LiMuon paper's runs (spec papers/limuon.md §6): one training run per (task, optimizer variant, seed).

Variants are names: `muon`, `muon2x` (Muon with twice the steps: equal gradient evaluations),
`adamw`, `limuon1` (Option #1), `limuon2_r<k>` (Option #2, rank k), `muonpp` (Option #1 + clipping);
a `-ns5` / `-svd` suffix picks the orthogonaliser of a Muon-family variant. Every run returns the
same result shape (curve, evals, final, wall time, gradient evaluations, optimizer state counts), so
the evaluate stage compares them without special cases.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from tasks.core.seeding import derive_seed
from tasks.optim.limuon import LiMuon
from tasks.optim.muon import Muon, muon_param_groups
from tasks.train.charlm import CharLMConfig, CharTransformer, evaluate_charlm, random_windows, split_matrix_params
from tasks.train.corpus import CharCorpus
from tasks.train.loop import TrainResult, cosine_factor, run_training, state_bytes
from tasks.train.synthetic import mls_loss

VARIANT_PATTERN = re.compile(r"^(muon|muon2x|adamw|limuon1|muonpp|limuon2_r(\d+))(?:-(ns5|svd))?$")


@dataclass(frozen=True)
class Variant:
    name: str
    family: str                 # "muon" | "adamw" | "limuon"
    option: int = 1             # LiMuon option
    rank: int | None = None     # LiMuon Option #2 rank
    clip: bool = False          # Muon++ = LiMuon #1 + clipping
    steps_factor: int = 1       # Muon-2x runs twice the steps
    orthogonalizer: str | None = None  # None: the setting's


def parse_variant(name: str) -> Variant:
    match = VARIANT_PATTERN.match(name)
    if match is None:
        raise ValueError(f"optimizer: must be muon, muon2x, adamw, limuon1, muonpp or limuon2_r<rank>, optionally "
                         f"with -ns5/-svd, got {name!r}")
    base, rank, orth = match.groups()
    if base == "adamw" and orth:
        raise ValueError(f"optimizer: adamw has no orthogonaliser, got {name!r}")
    if base.startswith("limuon2"):
        return Variant(name, "limuon", option=2, rank=int(rank), orthogonalizer=orth)
    return Variant(name, {"muon": "muon", "muon2x": "muon", "adamw": "adamw"}.get(base, "limuon"),
                   clip=base == "muonpp", steps_factor=2 if base == "muon2x" else 1, orthogonalizer=orth)


@dataclass(frozen=True)
class MuonFamily:
    """Shared hyperparameters: Muon's (lr, momentum, nesterov, weight decay) are reused by LiMuon (spec §3.2)."""

    lr: float
    momentum: float
    nesterov: bool
    weight_decay: float
    beta: float
    oversampling: int
    orthogonalizer: str
    clip: float
    aux_lr: float = 3e-3
    adamw_lr: float = 3e-3


def make_optimizer(variant: Variant, matrices: list[nn.Parameter], others: list[nn.Parameter], hp: MuonFamily,
                   seed: int, *, momentum_init: str = "zeros", keep_estimates: bool = False) -> torch.optim.Optimizer:
    orthogonalizer = variant.orthogonalizer or hp.orthogonalizer
    if variant.family == "adamw":
        return torch.optim.AdamW(matrices + others, lr=hp.adamw_lr, betas=(0.9, 0.95), weight_decay=hp.weight_decay)
    groups = muon_param_groups(matrices, others, lr=hp.lr, aux_lr=hp.aux_lr)
    if variant.family == "muon":
        return Muon(groups, momentum=hp.momentum, nesterov=hp.nesterov, weight_decay=hp.weight_decay,
                    orthogonalizer=orthogonalizer, momentum_init=momentum_init)
    return LiMuon(groups, beta=hp.beta, weight_decay=hp.weight_decay, option=variant.option, rank=variant.rank or 1,
                  oversampling=hp.oversampling, orthogonalizer=orthogonalizer, clip=hp.clip if variant.clip else None,
                  seed=derive_seed(seed, "rsvd"), keep_estimates=keep_estimates)


def matrix_state(optimizer: torch.optim.Optimizer, matrices: list[nn.Parameter]) -> list[dict]:
    """Per matrix: its shape and the elements of its persistent state (estimator / momentum, previous weights)."""
    rows = []
    for p in matrices:
        tensors = {k: v for k, v in optimizer.state.get(p, {}).items() if torch.is_tensor(v) and v.ndim > 0}
        rows.append({"shape": list(p.shape), "previous_weights": sum(v.numel() for k, v in tensors.items() if k == "previous"),
                     "estimator": sum(v.numel() for k, v in tensors.items() if k != "previous")})
    return rows


def state_summary(optimizer: torch.optim.Optimizer, matrices: list[nn.Parameter], others: list[nn.Parameter]) -> dict:
    per_matrix = matrix_state(optimizer, matrices)
    aux = sum(v.numel() for p in others for v in optimizer.state.get(p, {}).values() if torch.is_tensor(v) and v.ndim > 0)
    return {"per_matrix": per_matrix, "estimator": sum(r["estimator"] for r in per_matrix),
            "previous_weights": sum(r["previous_weights"] for r in per_matrix), "aux": aux,
            "state_bytes": state_bytes(optimizer)}


def run_record(task: str, variant: Variant, seed: int, result: TrainResult, state: dict, **extra) -> dict:
    return {"task": task, "optimizer": variant.name, "seed": seed, "curve": result.curve, "evals": result.evals,
            "final": result.final, "wall_time_s": result.wall_time_s, "grad_evals": result.grad_evals,
            "steps": result.curve[-1]["step"], "state": state, **extra}


# ---------------------------------------------------------------- mat-ls

@dataclass(frozen=True)
class MatLsSetting:
    steps: int
    batch: int
    tail_fraction: float = 0.1   # final loss = mean full-data loss over the last 10% of steps


def full_gradient(W: torch.Tensor, X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
    """grad of mean_i 0.5 ||W x_i - y_i||^2: (X W^T - Y)^T X / N."""
    return (X @ W.T - Y).T @ X / len(X)


def current_estimate(optimizer: torch.optim.Optimizer, W: nn.Parameter) -> torch.Tensor:
    """The direction the last step orthogonalised: Muon's EMA buffer (no Nesterov) or LiMuon's M."""
    return optimizer.estimates[W] if isinstance(optimizer, LiMuon) else optimizer.state[W]["momentum_buffer"]


def mat_ls_run(data: dict, variant_name: str, setting: MatLsSetting, hp: MuonFamily, seed: int) -> dict:
    """W_0 = 0, float64, constant LR; per step the full-data loss and ||M_t - grad F(W_t)|| / ||grad F(W_t)||,
    where W_t is the point the step's gradient was taken at."""
    variant = parse_variant(variant_name)
    X, Y = torch.from_numpy(data["X"]), torch.from_numpy(data["Y"])
    W = nn.Parameter(torch.zeros(Y.shape[1], X.shape[1], dtype=torch.float64))
    optimizer = make_optimizer(variant, [W], [], hp, seed, momentum_init="first_grad", keep_estimates=True)
    generator = torch.Generator().manual_seed(derive_seed(seed, "mat-ls-batches"))
    at_previous_point = {"grad": full_gradient(W.detach(), X, Y)}

    def evaluate() -> dict:
        true_grad = at_previous_point["grad"]
        error = torch.linalg.norm(current_estimate(optimizer, W) - true_grad) / torch.linalg.norm(true_grad)
        with torch.no_grad():
            at_previous_point["grad"] = full_gradient(W.detach(), X, Y)
            return {"full_loss": float(mls_loss(W, X, Y)), "estimator_error": float(error)}

    result = run_training(optimizer, lambda rows: mls_loss(W, X[rows], Y[rows]),
                          lambda i: torch.randperm(len(X), generator=generator)[:setting.batch],
                          setting.steps * variant.steps_factor, evaluate=evaluate, eval_every=1)
    tail = max(1, round(setting.tail_fraction * len(result.evals)))
    final_loss = float(np.mean([e["full_loss"] for e in result.evals[-tail:]]))
    return run_record("mat_ls", variant, seed, result, state_summary(optimizer, [W], []), final_loss=final_loss)


# ---------------------------------------------------------------- stdlib char-LM

@dataclass(frozen=True)
class CharLMSetting:
    steps: int
    batch: int
    eval_every: int
    eval_windows: int
    lr_floor: float = 0.1        # cosine decay to 10% of the LR
    config: CharLMConfig = field(default_factory=CharLMConfig)
    device: str = "cpu"


def charlm_run(corpus: CharCorpus, variant_name: str, setting: CharLMSetting, hp: MuonFamily, seed: int) -> dict:
    """Train the tiny Transformer from the seed's initialisation; batches come from the seed alone, so
    Muon-2x sees Muon's batches first and then more."""
    variant = parse_variant(variant_name)
    steps = setting.steps * variant.steps_factor
    model = CharTransformer(setting.config, seed=derive_seed(seed, "init")).to(setting.device)
    matrices, others = split_matrix_params(model)
    optimizer = make_optimizer(variant, matrices, others, hp, seed)
    generator = torch.Generator().manual_seed(derive_seed(seed, "charlm-batches"))
    context = setting.config.context

    def next_batch(i: int):
        x, y = random_windows(corpus.train, context, setting.batch, generator)
        return x.to(setting.device), y.to(setting.device)

    def loss_on_batch(batch) -> torch.Tensor:
        x, y = batch
        logits = model(x)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))

    result = run_training(optimizer, loss_on_batch, next_batch, steps,
                          evaluate=lambda: evaluate_charlm(model, corpus.val, context, setting.eval_windows),
                          eval_every=setting.eval_every, lr_factor=cosine_factor(steps, setting.lr_floor))
    return run_record("charlm", variant, seed, result, state_summary(optimizer, matrices, others),
                      final_val_loss=result.final["loss"])
