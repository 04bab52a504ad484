"""The SoftSignum paper's small-scale runs (spec softsignum §6): quad-het, mat-het and the stdlib char-LM,
each for one (optimizer, seed).

Every run returns the same plain record: the per-step curve (loss, lr, tau, saturated fraction, phase), the
evaluations, the final metrics, the temperature schedule where the optimizer built one, and the wall time.
Within a seed, every optimizer starts from the same point and sees the same batches / gradient noise, so
SoftSignum/SoftMuon must reproduce Signum/Muon exactly until T_sign.
"""
from __future__ import annotations

import numpy as np
import torch

from tasks.core.seeding import derive_seed
from tasks.optim.registry import build_optimizer, optimizer_factory
from tasks.train.charlm import CharLMSetting, train_charlm
from tasks.train.corpus import CharCorpus
from tasks.train.loop import TrainResult, run_training
from tasks.train.synthetic import QuadraticProblem, mls_loss

SIGN_FAMILY = ("signum", "softsignum", "hardswitch")
MUON_FAMILY = ("muon", "softmuon")
OPTIMIZERS = (*SIGN_FAMILY, *MUON_FAMILY, "adamw", "lion")
SOFT_OF = {"softsignum": "signum", "hardswitch": "signum", "softmuon": "muon"}  # method -> its hard counterpart


def hyperparameters(name: str, *, lr: float, total_steps: int, options: dict) -> dict:
    """The registry hyperparameters of one optimizer of the paper from its options (momentum, dampening,
    alpha_sign, eps, tau_max, soft_mode, aux_lr, weight_decay: each optimizer takes the keys it knows).
    Weight decay is 0 unless given, for AdamW too (torch's default is 1e-2)."""
    wd = options.get("weight_decay", 0.0)
    if name in SIGN_FAMILY:
        chosen = dict(lr=lr, momentum=options["momentum"], dampening=options.get("dampening", 0.0), weight_decay=wd,
                      eps=options.get("eps", 1e-4))
        if name != "signum":
            chosen |= dict(total_steps=total_steps, alpha_sign=options["alpha_sign"])
        if name == "softsignum":
            chosen["tau_max"] = options.get("tau_max", 20.0)
        return chosen
    if name in MUON_FAMILY:
        chosen = dict(lr=lr, aux_lr=options.get("aux_lr", 3e-4), momentum=options["momentum"], weight_decay=wd)
        if name == "softmuon":
            chosen |= dict(total_steps=total_steps, alpha_sign=options["alpha_sign"], eps=options.get("eps", 1e-4),
                           tau_max=options.get("tau_max", 1e9), soft_mode=options.get("soft_mode", "exact"))
        return chosen
    if name in ("adamw", "lion"):
        return dict(lr=lr, weight_decay=wd)
    raise ValueError(f"optimizer: must be one of {OPTIMIZERS}, got {name!r}")


def build(name: str, matrices: list, others: list, *, lr: float, total_steps: int, options: dict):
    """One optimizer of the paper from the registry: Muon-family over (matrices, others), the rest over both."""
    return build_optimizer(name, matrices, others, **hyperparameters(name, lr=lr, total_steps=total_steps,
                                                                      options=options))


def _schedule(optimizer) -> list[float] | None:
    schedules = optimizer.state.get("transition", {}).get("schedules", {}) if hasattr(optimizer, "transition") else {}
    return schedules[min(schedules)].tolist() if schedules else None


def _record(task: str, name: str, seed: int, lr: float, result: TrainResult, optimizer, **extra) -> dict:
    transition = getattr(optimizer, "transition", None)
    return {"task": task, "optimizer": name, "seed": seed, "lr": lr, "curve": result.curve, "evals": result.evals,
            "final": result.final, "wall_time_s": result.wall_time_s, "schedule": _schedule(optimizer),
            "t_sign": transition.sign_steps if transition else None, **extra}


def quad_het_run(data: dict, name: str, seed: int, *, steps: int, lr: float, noise_std: float, options: dict) -> dict:
    """f(x) = 0.5 sum h x^2 from data['x0'] with gradient noise noise_std N(0, I) drawn from the seed; the curve's
    `f` column is the noise-free objective after every step."""
    problem = QuadraticProblem(torch.as_tensor(data["h"], dtype=torch.float64), noise_std)
    x = torch.nn.Parameter(torch.as_tensor(data["x0"], dtype=torch.float64).clone())
    optimizer = build(name, [], [x], lr=lr, total_steps=steps, options=options)
    noise = torch.Generator().manual_seed(derive_seed(seed, "quad-het-noise"))

    def loss_on_batch(z: torch.Tensor) -> torch.Tensor:  # z fixed within a step: one stochastic gradient per step
        return problem.full_loss(x) + noise_std * (z * x).sum()

    result = run_training(optimizer, loss_on_batch, lambda i: torch.randn(x.shape, generator=noise, dtype=x.dtype),
                          steps, evaluate=lambda: {"f": float(problem.full_loss(x.detach()))}, eval_every=1)
    return _record("quad_het", name, seed, lr, result, optimizer)


def mat_het_run(data: dict, name: str, seed: int, *, steps: int, lr: float, batch: int, eval_every: int,
                options: dict) -> dict:
    """min_W (1/N) sum 0.5 ||W x_i - y_i||^2 from W = 0 with minibatches of `batch` rows drawn from the seed;
    evaluations hold the full-data loss."""
    X, Y = (torch.as_tensor(data[k], dtype=torch.float32) for k in ("X", "Y"))
    W = torch.nn.Parameter(torch.zeros(Y.shape[1], X.shape[1]))
    optimizer = build(name, [W], [], lr=lr, total_steps=steps, options=options)
    sampler = torch.Generator().manual_seed(derive_seed(seed, "mat-het-batches"))

    def loss_on_batch(rows: torch.Tensor) -> torch.Tensor:
        return mls_loss(W, X[rows], Y[rows])

    result = run_training(optimizer, loss_on_batch, lambda i: torch.randint(0, len(X), (batch,), generator=sampler),
                          steps, evaluate=lambda: {"loss": float(mls_loss(W.detach(), X, Y))}, eval_every=eval_every)
    return _record("mat_het", name, seed, lr, result, optimizer)


def charlm_run(corpus: CharCorpus, name: str, seed: int, *, setting: CharLMSetting, lr: float, options: dict) -> dict:
    """The char Transformer trained by the shared runner (tasks.train.charlm.train_charlm): validation loss /
    accuracy / perplexity every `eval_every` steps and at the end."""
    factory = optimizer_factory(name, **hyperparameters(name, lr=lr, total_steps=setting.steps, options=options))
    run = train_charlm(corpus, factory, seed, setting)
    return _record("charlm", name, seed, lr, run.result, run.optimizer)


def best_lr(grid_losses: dict[float, float]) -> float:
    """The grid point with the lowest validation loss (non-finite losses lose)."""
    finite = {lr: loss for lr, loss in grid_losses.items() if np.isfinite(loss)}
    if not finite:
        raise ValueError(f"calibration: every grid point diverged ({grid_losses})")
    return min(finite, key=finite.get)
