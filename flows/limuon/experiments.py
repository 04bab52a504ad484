"""The LiMuon paper's runs (spec papers/limuon.md §6): one training run per (task, optimizer variant, seed).

Variants are names (flows.limuon.variants). Every run returns the
same result shape (curve, evals, final, wall time, gradient evaluations, optimizer state counts), so
the evaluate stage compares them without special cases.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import torch
from torch import nn

from tasks.core.seeding import derive_seed
from tasks.optim.limuon import LiMuon
from tasks.optim.muon import muon_param_groups
from tasks.optim.registry import OptimizerFactory, optimizer_factory
from tasks.train.charlm import CharLMSetting, train_charlm
from tasks.train.corpus import CharCorpus
from tasks.train.loop import TrainResult, run_training, state_bytes
from tasks.train.synthetic import mls_loss

from .variants import Variant, parse_variant

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


def factory(variant: Variant, hp: MuonFamily, seed: int, *, momentum_init: str = "zeros",
            keep_estimates: bool = False) -> OptimizerFactory:
    """(matrices, others) -> the variant's optimizer. Muon's settings are reused by LiMuon (spec §3.2); Muon and
    AdamW come from the registry (AdamW with its defaults but for its LR and Muon's weight decay)."""
    orthogonalizer = variant.orthogonalizer or hp.orthogonalizer
    if variant.family == "adamw":
        return optimizer_factory("adamw", lr=hp.adamw_lr, weight_decay=hp.weight_decay)
    if variant.family == "muon":
        return optimizer_factory("muon", lr=hp.lr, aux_lr=hp.aux_lr, weight_decay=hp.weight_decay,
                                 orthogonalizer=orthogonalizer, momentum=hp.momentum, nesterov=hp.nesterov,
                                 momentum_init=momentum_init)
    return lambda matrices, others: LiMuon(
        muon_param_groups(matrices, others, lr=hp.lr, aux_lr=hp.aux_lr), beta=hp.beta, weight_decay=hp.weight_decay,
        option=variant.option, rank=variant.rank or 1, oversampling=hp.oversampling, orthogonalizer=orthogonalizer,
        clip=hp.clip if variant.clip else None, seed=derive_seed(seed, "rsvd"), keep_estimates=keep_estimates)


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
    optimizer = factory(variant, hp, seed, momentum_init="first_grad", keep_estimates=True)([W], [])
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

def charlm_run(corpus: CharCorpus, variant_name: str, setting: CharLMSetting, hp: MuonFamily, seed: int) -> dict:
    """The shared char-LM runner (tasks.train.charlm.train_charlm) for `setting.steps` x the variant's steps
    factor; batches come from the seed alone, so Muon-2x sees Muon's batches first and then more."""
    variant = parse_variant(variant_name)
    setting = replace(setting, steps=setting.steps * variant.steps_factor)
    run = train_charlm(corpus, factory(variant, hp, seed), seed, setting)
    return run_record("charlm", variant, seed, run.result, state_summary(run.optimizer, run.matrices, run.others),
                      final_val_loss=run.result.final["loss"])
