"""One training run of a set classifier by one method, every method at the same budget (epochs, batch, Adam,
cosine learning-rate decay, jitter) and the same clean loss term (spec §3.5, §3.8, §4).

- erm: CE on the clean sets.
- aug: (1 - beta) CE(clean) + beta CE(a random corruption of the training family): per set, either outliers
  from the proposal replacing a fraction ~ U[0.05, 0.3] of the elements, or a random deletion of a fraction
  ~ U[0.1, 0.6] (zero weights on the deleted, uniform on the kept), each with probability 1/2.
- random_weights: SW-DRSO with T = 0 (random eps, rho; uniform a_in and a_out on set + outlier pool): it
  deletes nothing.
- random_drop_outliers: SW-DRSO's budget spent at random, no ascent: per set the same eps, rho draws, a random
  floor(rho n) of the elements deleted (a_in uniform on the rest: a corner of the capped simplex, where the
  ascent's projection lands), the eps outlier mass uniform on a fresh pool from the proposal.
- worst_of_k: K draws of random_drop_outliers per set (each its own pool and deletion, the set's eps and rho);
  the one with the highest loss (no gradient) is trained on: a search at SW-DRSO's budget without gradients.
- sw_drso: (1 - beta) CE(clean) + beta CE(f(Z; a*)), a* from adversary.inner_max.

The outlier proposal: "ball" (uniform in the unit ball, point clouds) or "batch" (elements of another set of
the minibatch plus Gaussian noise, generic sets). Two generators: one for the data order and the jitter, one
for the corruptions, so that with eps = rho = 0 SW-DRSO sees exactly ERM's batches.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import torch
import torch.nn.functional as F

from tasks.core.params import Params
from tasks.sets.sliced_wasserstein import random_directions
from tasks.sets.weighted_encoders import EncoderConfig, WeightedSetClassifier

from .adversary import Adversary, diagnostics, inner_max, mix

METHODS = ("erm", "aug", "random_weights", "random_drop_outliers", "worst_of_k", "sw_drso")
RANDOM_BUDGET = ("random_drop_outliers", "worst_of_k")  # SW-DRSO's budget, spent at random
PROPOSALS = ("ball", "batch")
BATCH_PROPOSAL_NOISE = 0.1  # std of the Gaussian noise on elements borrowed from another set (our choice)
AUG_OUTLIER_FRACTION = (0.05, 0.3)
AUG_DELETE_FRACTION = (0.1, 0.6)


class TrainConfig(Params):
    method: Literal[METHODS]
    epochs: int
    batch: int = 64
    lr: float = 1e-3
    jitter: float = 0.01
    beta: float = 0.5
    eps_max: float = 0.3
    rho_max: float = 0.5
    pool_fraction: float = 0.25  # M = pool_fraction * n candidate outliers per set
    ascent_steps: int = 3  # T
    alpha: float = 2.0
    worst_of_k: int = 4  # K of Worst-of-K
    proposal: Literal[PROPOSALS] = "ball"
    sw_gamma: float = 0.0
    sw_projections: int = 50

    @property
    def steps(self) -> int:
        """T of the inner maximisation: 0 for Random-weights."""
        return 0 if self.method == "random_weights" else self.ascent_steps


@dataclass
class TrainResult:
    model: WeightedSetClassifier
    log: list[dict] = field(default_factory=list)  # per epoch: clean/second loss, adversary diagnostics
    wall_time_s: float = 0.0


def outlier_pool(X: torch.Tensor, M: int, proposal: str, generator: torch.Generator) -> torch.Tensor:
    """[B, M, d] candidate outliers for each set of X [B, n, d]."""
    B, n, d = X.shape
    if proposal == "ball":
        direction = torch.randn(B, M, d, generator=generator)
        direction = direction / direction.norm(dim=-1, keepdim=True)
        return (direction * torch.rand(B, M, 1, generator=generator) ** (1.0 / d)).to(X.device)
    other = X.roll(1, dims=0)  # another set of the minibatch
    picked = other[torch.arange(B)[:, None], torch.randint(0, n, (B, M), generator=generator)]
    return picked + BATCH_PROPOSAL_NOISE * torch.randn(B, M, d, generator=generator).to(X.device)


def random_corruption(X: torch.Tensor, proposal: str, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Aug's corrupted sets and weights: per set, outliers replacing a random fraction, or a random deletion."""
    B, n, _ = X.shape
    uniform = lambda low, high: low + (high - low) * torch.rand(B, 1, generator=generator)  # noqa: E731
    order = torch.rand(B, n, generator=generator).argsort(dim=1).argsort(dim=1)  # a random rank per element
    use_outliers = torch.rand(B, 1, generator=generator) < 0.5
    replaced = (use_outliers & (order < torch.round(uniform(*AUG_OUTLIER_FRACTION) * n))).to(X.device)
    deleted = (~use_outliers & (order < torch.round(uniform(*AUG_DELETE_FRACTION) * n))).to(X.device)
    corrupted = torch.where(replaced[..., None], outlier_pool(X, n, proposal, generator), X)
    kept = (~deleted).to(X.dtype)
    return corrupted, kept / kept.sum(dim=1, keepdim=True)


def budget(B: int, config: TrainConfig, generator: torch.Generator, device) -> tuple[torch.Tensor, torch.Tensor]:
    """Per set, the outlier mass eps ~ U[0, eps_max] and the deletion budget rho ~ U[0, rho_max]."""
    eps = (config.eps_max * torch.rand(B, generator=generator)).to(device)
    rho = (config.rho_max * torch.rand(B, generator=generator)).to(device)
    return eps, rho


def random_deletion(B: int, n: int, rho: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """a_in [B, n]: uniform on a random n - floor(rho n) of each set's elements (inside the cap 1/((1 - rho) n))."""
    deleted = torch.floor(rho.cpu() * n)
    rank = torch.rand(B, n, generator=generator).argsort(dim=1).argsort(dim=1)
    kept = (rank >= deleted[:, None]).to(rho.dtype)
    return (kept / kept.sum(dim=1, keepdim=True)).to(rho.device)


def random_budget(X: torch.Tensor, M: int, eps: torch.Tensor, rho: torch.Tensor, proposal: str,
                  generator: torch.Generator) -> tuple[torch.Tensor, Adversary]:
    """One random corruption at the sets' budget: the support Z (the set, a fresh pool) and its weights."""
    B, n, _ = X.shape
    Z = torch.cat([X, outlier_pool(X, M, proposal, generator)], dim=1)
    a_in = random_deletion(B, n, rho, generator)
    a_out = torch.full((B, M), 1.0 / M, dtype=X.dtype, device=X.device)
    return Z, Adversary(mix(a_in, a_out, eps), a_in, a_out)


def worst_of(model, draws: list[tuple[torch.Tensor, Adversary]], y: torch.Tensor) -> tuple[torch.Tensor, Adversary]:
    """Per set, the draw with the highest loss (no gradient)."""
    with torch.no_grad():
        losses = torch.stack([F.cross_entropy(model(Z, adversary.a), y, reduction="none") for Z, adversary in draws])
    pick, sets = losses.argmax(dim=0), torch.arange(len(y), device=y.device)
    Z = torch.stack([Z for Z, _ in draws])[pick, sets]
    a, a_in, a_out = (torch.stack([getattr(adversary, key) for _, adversary in draws])[pick, sets]
                      for key in ("a", "a_in", "a_out"))
    return Z, Adversary(a, a_in, a_out)


def second_term(model, config: TrainConfig, X: torch.Tensor, y: torch.Tensor, generator: torch.Generator,
                directions: torch.Tensor | None) -> tuple[torch.Tensor, dict[str, float]]:
    """The corrupted-set loss of every method but ERM, and its diagnostics."""
    B, n, _ = X.shape
    if config.method == "aug":
        corrupted, a = random_corruption(X, config.proposal, generator)
        return F.cross_entropy(model(corrupted, a), y), {"deleted_fraction": float((a == 0).float().mean())}
    M = max(1, int(round(config.pool_fraction * n)))
    if config.method in RANDOM_BUDGET:
        eps, rho = budget(B, config, generator, X.device)
        draws = [random_budget(X, M, eps, rho, config.proposal, generator)
                 for _ in range(config.worst_of_k if config.method == "worst_of_k" else 1)]
        Z, adversary = worst_of(model, draws, y) if len(draws) > 1 else draws[0]
    else:
        Z = torch.cat([X, outlier_pool(X, M, config.proposal, generator)], dim=1)
        eps, rho = budget(B, config, generator, X.device)
        adversary = inner_max(model, Z, n, y, eps, rho, steps=config.steps, alpha=config.alpha,
                              sw_gamma=config.sw_gamma, directions=directions)
    return F.cross_entropy(model(Z, adversary.a), y), diagnostics(adversary, n)


def train_classifier(X: np.ndarray, y: np.ndarray, encoder: EncoderConfig, config: TrainConfig, seed: int,
                     device: str = "cpu") -> TrainResult:
    """Adam with cosine decay to 0 over epochs * ceil(N / batch) steps; the same initial network for every
    method at a given seed. Random draws come from CPU generators (the same numbers on any device); the
    network and the batches live on `device`; the returned model is on the CPU."""
    torch.manual_seed(seed)
    model = WeightedSetClassifier(encoder).to(device)
    data_generator = torch.Generator().manual_seed(seed)
    corruption_generator = torch.Generator().manual_seed(seed + 1)
    X_all, y_all = torch.from_numpy(np.asarray(X, dtype=np.float32)), torch.from_numpy(np.asarray(y, dtype=np.int64))
    per_epoch = math.ceil(len(y_all) / config.batch)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=config.epochs * per_epoch)
    directions = (random_directions(X_all.shape[2], config.sw_projections, corruption_generator).to(device)
                  if config.sw_gamma > 0 else None)
    result = TrainResult(model)
    started = time.perf_counter()
    for epoch in range(config.epochs):
        sums: dict[str, float] = {}
        for index in torch.randperm(len(y_all), generator=data_generator).split(config.batch):
            Xb = X_all[index] + config.jitter * torch.randn((len(index), *X_all.shape[1:]), generator=data_generator)
            Xb, yb = Xb.to(device), y_all[index].to(device)
            clean = F.cross_entropy(model(Xb), yb)
            loss, numbers = clean, {"clean_loss": clean.item()}
            if config.method != "erm":
                second, extra = second_term(model, config, Xb, yb, corruption_generator, directions)
                loss = (1 - config.beta) * clean + config.beta * second
                numbers |= {"second_loss": second.item()} | extra
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
            for key, value in numbers.items():
                sums[key] = sums.get(key, 0.0) + value / per_epoch
        result.log.append({"epoch": epoch + 1} | sums)
    result.wall_time_s = time.perf_counter() - started
    result.model = model.cpu().eval()
    return result
