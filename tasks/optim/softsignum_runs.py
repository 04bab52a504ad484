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
from lion_pytorch import Lion

from tasks.core.seeding import derive_seed
from tasks.optim.muon import Muon, SoftMuon, muon_param_groups
from tasks.optim.signum import HardSwitchSign, Signum, SoftSignum
from tasks.train.charlm import CharLMConfig, CharTransformer, evaluate_charlm, random_windows, split_matrix_params
from tasks.train.corpus import CharCorpus
from tasks.train.loop import TrainResult, cosine_factor, run_training
from tasks.train.synthetic import QuadraticProblem, mls_loss

SIGN_FAMILY = ("signum", "softsignum", "hardswitch")
MUON_FAMILY = ("muon", "softmuon")
OPTIMIZERS = (*SIGN_FAMILY, *MUON_FAMILY, "adamw", "lion")
SOFT_OF = {"softsignum": "signum", "hardswitch": "signum", "softmuon": "muon"}  # method -> its hard counterpart


def build_optimizer(name: str, matrices: list, others: list, *, lr: float, total_steps: int, options: dict):
    """One optimizer of the paper. Muon-family: `matrices` get Muon, `others` the aux AdamW (options['aux_lr']);
    every other optimizer gets all parameters. options: momentum, dampening, alpha_sign, eps, tau_max, soft_mode,
    aux_lr, weight_decay (each optimizer takes the keys it knows)."""
    params = [*matrices, *others]
    wd = options.get("weight_decay", 0.0)
    if name in SIGN_FAMILY:
        common = dict(lr=lr, momentum=options["momentum"], dampening=options.get("dampening", 0.0), weight_decay=wd,
                      eps=options.get("eps", 1e-4))
        if name == "signum":
            return Signum(params, **common)
        transition = dict(total_steps=total_steps, alpha_sign=options["alpha_sign"])
        if name == "softsignum":
            return SoftSignum(params, **common, **transition, tau_max=options.get("tau_max", 20.0))
        return HardSwitchSign(params, **common, **transition)
    if name in MUON_FAMILY:
        groups = muon_param_groups(matrices, others, lr=lr, aux_lr=options.get("aux_lr", 3e-4))
        common = dict(momentum=options["momentum"], weight_decay=wd)
        if name == "muon":
            return Muon(groups, **common)
        return SoftMuon(groups, **common, total_steps=total_steps, alpha_sign=options["alpha_sign"],
                        eps=options.get("eps", 1e-4), tau_max=options.get("tau_max", 1e9),
                        soft_mode=options.get("soft_mode", "exact"))
    if name == "adamw":
        return torch.optim.AdamW(params, lr=lr, weight_decay=wd)
    if name == "lion":
        return Lion(params, lr=lr, weight_decay=wd)
    raise ValueError(f"optimizer: must be one of {OPTIMIZERS}, got {name!r}")


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
    optimizer = build_optimizer(name, [], [x], lr=lr, total_steps=steps, options=options)
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
    optimizer = build_optimizer(name, [W], [], lr=lr, total_steps=steps, options=options)
    sampler = torch.Generator().manual_seed(derive_seed(seed, "mat-het-batches"))

    def loss_on_batch(rows: torch.Tensor) -> torch.Tensor:
        return mls_loss(W, X[rows], Y[rows])

    result = run_training(optimizer, loss_on_batch, lambda i: torch.randint(0, len(X), (batch,), generator=sampler),
                          steps, evaluate=lambda: {"loss": float(mls_loss(W.detach(), X, Y))}, eval_every=eval_every)
    return _record("mat_het", name, seed, lr, result, optimizer)


def charlm_run(corpus: CharCorpus, name: str, seed: int, *, config: CharLMConfig, steps: int, lr: float, batch: int,
               eval_every: int, eval_windows: int, lr_floor: float, options: dict, device: str = "cpu",
               on_nonfinite: str = "raise") -> dict:
    """The char Transformer trained for `steps` with cosine decay to lr_floor x lr; validation loss / accuracy /
    perplexity every `eval_every` steps and at the end (the first `eval_windows` windows of the validation text).
    on_nonfinite="stop" ends a diverging run (LR grids) instead of raising."""
    model = CharTransformer(config, seed=derive_seed(seed, "model")).to(device)
    matrices, others = split_matrix_params(model)
    if name not in MUON_FAMILY:
        matrices, others = [], list(model.parameters())
    optimizer = build_optimizer(name, matrices, others, lr=lr, total_steps=steps, options=options)
    windows = torch.Generator().manual_seed(derive_seed(seed, "charlm-batches"))
    train, val = corpus.train, corpus.val.to(device)

    def next_batch(i: int):
        x, y = random_windows(train, config.context, batch, windows)
        return x.to(device), y.to(device)

    def loss_on_batch(xy) -> torch.Tensor:
        x, y = xy
        logits = model(x)
        return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))

    result = run_training(optimizer, loss_on_batch, next_batch, steps,
                          evaluate=lambda: evaluate_charlm(model, val, config.context, max_windows=eval_windows),
                          eval_every=eval_every, lr_factor=cosine_factor(steps, lr_floor), on_nonfinite=on_nonfinite)
    return _record("charlm", name, seed, lr, result, optimizer)


def best_lr(grid_losses: dict[float, float]) -> float:
    """The grid point with the lowest validation loss (non-finite losses lose)."""
    finite = {lr: loss for lr, loss in grid_losses.items() if np.isfinite(loss)}
    if not finite:
        raise ValueError(f"calibration: every grid point diverged ({grid_losses})")
    return min(finite, key=finite.get)
