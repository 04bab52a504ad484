"""The SoftSignum paper's small-scale runs (spec softsignum §6): quad-het, mat-het and the stdlib char-LM,
each for one (optimizer, seed).

Every run returns the same plain record: the per-step curve (loss, lr, tau, saturated fraction, phase), the
evaluations, the final metrics, the temperature schedule where the optimizer built one, the clamp's use (share
of schedule entries at tau_max, saturated fraction after T_sign), and the wall time. A run's optimizer is a name
of flows.softsignum.variants: a method or a control of SoftSignum's clamp (hardswitch_x20, softsignum_unclamped).
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

from .variants import base_of, parse_variant

SIGN_FAMILY = ("signum", "softsignum", "hardswitch")
MUON_FAMILY = ("muon", "softmuon")
OPTIMIZERS = (*SIGN_FAMILY, *MUON_FAMILY, "adamw", "lion")
SOFT_OF = {"softsignum": "signum", "hardswitch": "signum", "softmuon": "muon"}  # base -> its hard counterpart
SOFTMUON_TAU_MAX = 1e9  # SoftMuon's official default; no task of this paper changes it


def hyperparameters(name: str, *, lr: float, total_steps: int, options: dict) -> dict:
    """The registry hyperparameters of one optimizer of the paper (a name of flows.softsignum.variants) from its
    options (momentum, dampening, alpha_sign, eps, tau_max = SoftSignum's clamp, soft_mode, aux_lr, weight_decay:
    each optimizer takes the keys it knows), then the variant's own overrides (a control's switch_scale or
    tau_max). Weight decay is 0 unless given, for AdamW too (torch's default is 1e-2)."""
    variant = parse_variant(name)
    return _base_hyperparameters(variant.base, lr=lr, total_steps=total_steps, options=options) | variant.overrides


def _base_hyperparameters(name: str, *, lr: float, total_steps: int, options: dict) -> dict:
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
                           tau_max=SOFTMUON_TAU_MAX, soft_mode=options.get("soft_mode", "exact"))
        return chosen
    if name in ("adamw", "lion"):
        return dict(lr=lr, weight_decay=wd)
    raise ValueError(f"optimizer: must be one of {OPTIMIZERS}, got {name!r}")


def build(name: str, matrices: list, others: list, *, hp: dict):
    """One optimizer of the paper from the registry: Muon-family over (matrices, others), the rest over both."""
    return build_optimizer(base_of(name), matrices, others, **hp)


def _schedule(optimizer) -> list[float] | None:
    schedules = optimizer.state.get("transition", {}).get("schedules", {}) if hasattr(optimizer, "transition") else {}
    return schedules[min(schedules)].tolist() if schedules else None


def clamp_use(schedule: list[float] | None, tau_max: float | None, curve: list[dict], t_sign: int | None) -> dict:
    """How much the clamp shapes a run: the share of schedule entries equal to tau_max (None without a schedule)
    and the mean saturated fraction mean(|u| >= 1 - eps) over the logged steps after T_sign (None without a
    transition). A schedule at tau_max everywhere with nothing saturated is inert: u ~ tau_max d."""
    at_max = (float(np.mean(np.asarray(schedule) == tau_max)) if schedule and tau_max is not None else None)
    after = [row["saturated_fraction"] for row in curve if t_sign is not None and row["step"] > t_sign
             and row.get("saturated_fraction") is not None]
    return {"tau_max": tau_max, "schedule_at_tau_max": at_max,
            "saturated_after_t_sign": float(np.mean(after)) if after else None}


def _record(task: str, name: str, seed: int, lr: float, result: TrainResult, optimizer, hp: dict, **extra) -> dict:
    transition = getattr(optimizer, "transition", None)
    schedule, t_sign = _schedule(optimizer), transition.sign_steps if transition else None
    return {"task": task, "optimizer": name, "seed": seed, "lr": lr, "curve": result.curve, "evals": result.evals,
            "final": result.final, "wall_time_s": result.wall_time_s, "schedule": schedule, "t_sign": t_sign,
            "switch_scale": hp.get("switch_scale"), **clamp_use(schedule, hp.get("tau_max"), result.curve, t_sign),
            **extra}


def quad_het_run(data: dict, name: str, seed: int, *, steps: int, lr: float, noise_std: float, options: dict) -> dict:
    """f(x) = 0.5 sum h x^2 from data['x0'] with gradient noise noise_std N(0, I) drawn from the seed; the curve's
    `f` column is the noise-free objective after every step."""
    problem = QuadraticProblem(torch.as_tensor(data["h"], dtype=torch.float64), noise_std)
    x = torch.nn.Parameter(torch.as_tensor(data["x0"], dtype=torch.float64).clone())
    hp = hyperparameters(name, lr=lr, total_steps=steps, options=options)
    optimizer = build(name, [], [x], hp=hp)
    noise = torch.Generator().manual_seed(derive_seed(seed, "quad-het-noise"))

    def loss_on_batch(z: torch.Tensor) -> torch.Tensor:  # z fixed within a step: one stochastic gradient per step
        return problem.full_loss(x) + noise_std * (z * x).sum()

    result = run_training(optimizer, loss_on_batch, lambda i: torch.randn(x.shape, generator=noise, dtype=x.dtype),
                          steps, evaluate=lambda: {"f": float(problem.full_loss(x.detach()))}, eval_every=1)
    return _record("quad_het", name, seed, lr, result, optimizer, hp)


def mat_het_run(data: dict, name: str, seed: int, *, steps: int, lr: float, batch: int, eval_every: int,
                options: dict) -> dict:
    """min_W (1/N) sum 0.5 ||W x_i - y_i||^2 from W = 0 with minibatches of `batch` rows drawn from the seed;
    evaluations hold the full-data loss."""
    X, Y = (torch.as_tensor(data[k], dtype=torch.float32) for k in ("X", "Y"))
    W = torch.nn.Parameter(torch.zeros(Y.shape[1], X.shape[1]))
    hp = hyperparameters(name, lr=lr, total_steps=steps, options=options)
    optimizer = build(name, [W], [], hp=hp)
    sampler = torch.Generator().manual_seed(derive_seed(seed, "mat-het-batches"))

    def loss_on_batch(rows: torch.Tensor) -> torch.Tensor:
        return mls_loss(W, X[rows], Y[rows])

    result = run_training(optimizer, loss_on_batch, lambda i: torch.randint(0, len(X), (batch,), generator=sampler),
                          steps, evaluate=lambda: {"loss": float(mls_loss(W.detach(), X, Y))}, eval_every=eval_every)
    return _record("mat_het", name, seed, lr, result, optimizer, hp)


def charlm_run(corpus: CharCorpus, name: str, seed: int, *, setting: CharLMSetting, lr: float, options: dict) -> dict:
    """The char Transformer trained by the shared runner (tasks.train.charlm.train_charlm): validation loss /
    accuracy / perplexity every `eval_every` steps and at the end."""
    hp = hyperparameters(name, lr=lr, total_steps=setting.steps, options=options)
    run = train_charlm(corpus, optimizer_factory(base_of(name), **hp), seed, setting)
    return _record("charlm", name, seed, lr, run.result, run.optimizer, hp)
