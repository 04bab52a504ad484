"""sps_safe P3 (spec §6): the digits MLP trained by SPS_safe, IMA-SPS_safe and the baselines, with the test
accuracy per epoch and the mini-batch gradient norm of every step (the paper: under SPS_safe gradient norms do
not collapse)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from tasks.optim.polyak import IMASPSSafe, SPSMax, SPSSafe, global_grad_norm_sq
from tasks.train.digits import MLP, DigitsSplit, batch_sampler, evaluate_classifier, steps_per_epoch
from tasks.train.loop import run_training

KINDS = ("sps_safe", "ima_sps_safe", "sps_max", "sgd", "adam")


@dataclass(frozen=True)
class DigitsOptimizer:
    """An optimizer of P3; each kind reads only its own fields (sps_safe: M; ima_sps_safe: M, lam;
    sps_max: c, gamma_b; sgd, adam: lr)."""

    kind: str
    M: float = 1.0
    lam: float = 9.0
    c: float = 0.5
    gamma_b: float = 1.0
    lr: float = 1e-3

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind: must be one of {KINDS}, got {self.kind!r}")

    @property
    def label(self) -> str:
        fields = {"sps_safe": ("M",), "ima_sps_safe": ("M", "lam"), "sps_max": ("c", "gamma_b"), "sgd": ("lr",),
                  "adam": ("lr",)}[self.kind]
        return "_".join([self.kind, *(f"{name}{getattr(self, name):g}" for name in fields)])

    def build(self, params) -> torch.optim.Optimizer:
        """The optimizer over `params`; cross-entropy's lower bound l* = 0 for the Polyak kinds."""
        if self.kind == "sps_safe":
            return SPSSafe(params, M=self.M)
        if self.kind == "ima_sps_safe":
            return IMASPSSafe(params, M=self.M, lam=self.lam)
        if self.kind == "sps_max":
            return SPSMax(params, c=self.c, gamma_b=self.gamma_b)
        if self.kind == "sgd":
            return torch.optim.SGD(params, lr=self.lr)
        return torch.optim.Adam(params, lr=self.lr)


class GradNormProbe:
    """Wraps an optimizer that keeps no `stats` (SGD, Adam) so the loop records ||g||^2 of every step too."""

    def __init__(self, optimizer: torch.optim.Optimizer):
        self.optimizer = optimizer
        self.param_groups = optimizer.param_groups
        self.stats: dict = {}

    def zero_grad(self) -> None:
        self.optimizer.zero_grad()

    def step(self, closure):
        def probed():
            loss = closure()
            self.stats = {"grad_norm_sq": global_grad_norm_sq(
                [p for group in self.param_groups for p in group["params"] if p.grad is not None])}
            return loss

        return self.optimizer.step(probed)


def train_digits(split: DigitsSplit, spec: DigitsOptimizer, *, epochs: int, batch: int, seed: int,
                 device: str = "cpu") -> dict:
    """Train the 64-128-128-10 MLP; returns per-epoch test accuracy/loss (epoch 0 = init), per-step train loss,
    gradient norm and step size (nan where the method has no step size), wall time."""
    torch.manual_seed(seed)
    model = MLP((64, 128, 128, 10), seed=seed).to(device)
    x_train, y_train = split.x_train.to(device), split.y_train.to(device)
    x_test, y_test = split.x_test.to(device), split.y_test.to(device)
    optimizer = spec.build(model.parameters())
    if not hasattr(optimizer, "stats"):
        optimizer = GradNormProbe(optimizer)
    per_epoch = steps_per_epoch(len(y_train), batch)
    result = run_training(
        optimizer, lambda idx: F.cross_entropy(model(x_train[idx]), y_train[idx]),
        batch_sampler(len(y_train), batch, torch.Generator().manual_seed(seed)), epochs * per_epoch,
        evaluate=lambda: evaluate_classifier(model, x_test, y_test), eval_every=per_epoch, eval_at_start=True)
    curve = result.curve
    return {"label": spec.label, "kind": spec.kind, "seed": seed, "steps_per_epoch": per_epoch,
            "test_accuracy": np.array([e["accuracy"] for e in result.evals]),
            "test_loss": np.array([e["loss"] for e in result.evals]),
            "train_loss": np.array([row["loss"] for row in curve]),
            "grad_norm": np.sqrt([row["grad_norm_sq"] for row in curve]),
            "step_size": np.array([row.get("step_size", np.nan) for row in curve]),
            "wall_time_s": result.wall_time_s}


def grad_norm_ratio(grad_norm: np.ndarray, per_epoch: int) -> float:
    """Median mini-batch gradient norm of the last epoch over that of the first (spec §6 P3 diagnostic)."""
    return float(np.median(grad_norm[-per_epoch:]) / np.median(grad_norm[:per_epoch]))
