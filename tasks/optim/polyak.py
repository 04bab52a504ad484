"""Stochastic Polyak step sizes: SPS_safe, its IMA momentum form, and the Polyak baselines.

The step-size rules are pure functions of scalars (python floats, numpy arrays of one value per run, or 0-d
tensors), so one definition serves the vectorised numpy sweeps and the torch optimizers below. Every rule takes the
mini-batch loss f_i(x_t) and the squared norm ||g_t||^2 of the subgradient of the SAME mini-batch.

    SPS_safe      gamma = (f_i - l*) / max(||g||^2, M)
    SPS_max       gamma = min((f_i - l*) / (c ||g||^2 + eps), gamma_b)
    SPS_+         gamma = [f_i - f_i(x*)]_+ / (||g||^2 + eps)                      (oracle: needs x*)
    IMA-SPS_safe  eta   = [f_i - l* + <g, z - x>]_+ / max(||g||^2, M)
    IMA-SPS_+     eta   = [f_i - f_i(x*) + <g, z - x>]_+ / (||g||^2 + eps)         (oracle)

IMA (iterate moving average, Sebbouh et al. 2021): z <- z - eta g, x <- (lam_{t+1} x + z) / (lam_{t+1} + 1),
z_0 = x_0. By construction z_t - x_t = lam_t (x_t - x_{t-1}), which is why the momentum term of the step
size is <g, z - x> (0 at t = 0). Constant lam is heavy ball with beta = lam / (1 + lam); lam = "t" is the
last-iterate schedule lam_t = t.
"""
from __future__ import annotations

import numpy as np
import torch

from tasks.optim.dropin import DropInOptimizer
from tasks.optim.grads import global_grad_norm_sq

EPS = 1e-12  # the baselines' denominators: keeps g = 0 finite (the update is 0 anyway)
LAST_ITERATE = "t"


def sps_safe_step(loss, grad_norm_sq, M, ell_star=0.0):
    """SPS_safe: the Polyak step while ||g||^2 >= M, a subgradient step of size (f_i - l*)/M below it.

    The update length (f_i - l*) ||g|| / max(||g||^2, M) is at most (f_i - l*) / sqrt(M): no blow-up as g -> 0.
    """
    return (loss - ell_star) / np.maximum(grad_norm_sq, M)


def sps_max_step(loss, grad_norm_sq, c, gamma_b, ell_star=0.0):
    """SPS_max (Loizou et al. 2021): the Polyak step with constant c, capped at gamma_b."""
    return np.minimum((loss - ell_star) / (c * grad_norm_sq + EPS), gamma_b)


def sps_plus_step(loss, loss_at_optimum, grad_norm_sq):
    """SPS_+ (Garrigos et al. 2023): the Polyak step with the oracle f_i(x*) in place of the lower bound."""
    return np.maximum(loss - loss_at_optimum, 0.0) / (grad_norm_sq + EPS)


def ima_sps_safe_step(loss, grad_norm_sq, momentum_inner, M, ell_star=0.0):
    """IMA-SPS_safe; momentum_inner = <g_t, z_t - x_t> = lam_t <g_t, x_t - x_{t-1}>."""
    return np.maximum(loss - ell_star + momentum_inner, 0.0) / np.maximum(grad_norm_sq, M)


def ima_sps_plus_step(loss, loss_at_optimum, grad_norm_sq, momentum_inner):
    """IMA-SPS_+ (oracle): IMA-SPS_safe's numerator with f_i(x*), SPS_+'s denominator."""
    return np.maximum(loss - loss_at_optimum + momentum_inner, 0.0) / (grad_norm_sq + EPS)


def ima_weight(t: int, lam) -> float:
    """lam_t: the constant lam, or t for the last-iterate schedule lam = "t"."""
    return float(t) if lam == LAST_ITERATE else float(lam)


def ima_update(x, z, g, eta, lam_next):
    """(x_{t+1}, z_{t+1}): z <- z - eta g; x <- (lam_{t+1} x + z) / (lam_{t+1} + 1). lam = 0 is plain x - eta g."""
    z_next = z - eta * g
    return (lam_next * x + z_next) / (lam_next + 1), z_next


def safeguard_active(grad_norm_sq, M):
    """Steps where SPS_safe's denominator is M, not ||g||^2 (g = 0 counted apart: it moves nothing)."""
    return (grad_norm_sq > 0) & (grad_norm_sq < M)


def check_lam(lam, name: str = "lam") -> None:
    if lam != LAST_ITERATE and not (isinstance(lam, (int, float)) and lam >= 0):
        raise ValueError(f"{name}: must be >= 0 or {LAST_ITERATE!r} (lam_t = t), got {lam!r}")


# ---------------------------------------------------------------- torch optimizers

def _descend(param_groups, step: float) -> None:
    """p <- p (1 - wd gamma) - gamma g for every parameter with a gradient."""
    for group in param_groups:
        for p in group["params"]:
            if p.grad is not None:
                p.mul_(1 - group["weight_decay"] * step).add_(p.grad, alpha=-step)


class _PolyakShell(DropInOptimizer):
    """One scalar step size per step from the closure's mini-batch loss and the gradient norm over ALL parameters.

    `loss = opt.step(closure)`: closure() evaluates one mini-batch, runs backward and returns the loss (it
    must be bounded below by ell_star). Weight decay (per group) is decoupled and scaled by the step,
    p <- p (1 - wd gamma) - gamma g, and enters neither the loss nor the gradient norm (spec §3.5).
    `stats` after each step: {step_size, grad_norm_sq, safeguard_active}.
    """

    def __init__(self, params, weight_decay: float):
        if weight_decay < 0:
            raise ValueError(f"weight_decay: must be >= 0, got {weight_decay}")
        super().__init__(params, {"weight_decay": weight_decay})
        self.stats: dict = {}

    def _with_grad(self) -> list[torch.Tensor]:
        return [p for group in self.param_groups for p in group["params"] if p.grad is not None]

    @torch.no_grad()
    def step(self, closure=None):
        if closure is None:
            raise ValueError(f"{type(self).__name__}.step: needs a closure returning the mini-batch loss")
        with torch.enable_grad():
            loss = closure()
        self._polyak_step(float(loss))
        return loss


class SPSSafe(_PolyakShell):
    """SPS_safe: gamma = (f_i - ell_star) / max(||g||^2, M), x <- x - gamma g."""

    def __init__(self, params, M: float = 1.0, ell_star: float = 0.0, weight_decay: float = 0.0):
        if not M > 0:
            raise ValueError(f"M: must be > 0, got {M}")
        super().__init__(params, weight_decay)
        self.M, self.ell_star = float(M), float(ell_star)

    def _polyak_step(self, loss: float) -> None:
        grad_norm_sq = global_grad_norm_sq(self._with_grad())
        step = float(sps_safe_step(loss, grad_norm_sq, self.M, self.ell_star))
        _descend(self.param_groups, step)
        self.stats = {"step_size": step, "grad_norm_sq": grad_norm_sq,
                      "safeguard_active": bool(safeguard_active(grad_norm_sq, self.M))}


class SPSMax(_PolyakShell):
    """SPS_max: gamma = min((f_i - ell_star) / (c ||g||^2), gamma_b); safeguard_active = the cap was taken (g != 0)."""

    def __init__(self, params, c: float = 0.5, gamma_b: float = 1.0, ell_star: float = 0.0, weight_decay: float = 0.0):
        if not c > 0:
            raise ValueError(f"c: must be > 0, got {c}")
        if not gamma_b > 0:
            raise ValueError(f"gamma_b: must be > 0, got {gamma_b}")
        super().__init__(params, weight_decay)
        self.c, self.gamma_b, self.ell_star = float(c), float(gamma_b), float(ell_star)

    def _polyak_step(self, loss: float) -> None:
        grad_norm_sq = global_grad_norm_sq(self._with_grad())
        step = float(sps_max_step(loss, grad_norm_sq, self.c, self.gamma_b, self.ell_star))
        _descend(self.param_groups, step)
        self.stats = {"step_size": step, "grad_norm_sq": grad_norm_sq, "safeguard_active": grad_norm_sq > 0 and step >= self.gamma_b}


class IMASPSSafe(_PolyakShell):
    """IMA-SPS_safe: SPS_safe in iterate-moving-average form (heavy ball beta = lam / (1 + lam)).

    The parameters hold x; state z starts at x. M <= 0 means "M = the first nonzero ||g||^2 observed"
    (the reference class's auto-init). Weight decay, which the reference class accepts but ignores, is
    applied to z the way SPSSafe applies it to x: z <- z (1 - wd eta) - eta g, then x is averaged with z.
    """

    def __init__(self, params, M: float = 1.0, lam=9.0, ell_star: float = 0.0, weight_decay: float = 0.0):
        check_lam(lam)
        super().__init__(params, weight_decay)
        self.lam, self.ell_star = lam, float(ell_star)
        # The step counter and the (possibly auto-initialised) M are run state: kept in self.state so that
        # state_dict / load_state_dict carry them and a resumed run continues the same trajectory.
        self.state["ima"] = {"t": 0, "M": float(M) if M > 0 else None}

    def _polyak_step(self, loss: float) -> None:
        params = self._with_grad()
        grad_norm_sq = global_grad_norm_sq(params)
        run = self.state["ima"]
        zs = [self.state[p].setdefault("z", p.detach().clone()) for p in params]
        if run["M"] is None and grad_norm_sq > 0:
            run["M"] = grad_norm_sq
        M = run["M"]
        inner = float(sum((p.grad.double() * (z - p).double()).sum() for p, z in zip(params, zs)))
        eta = float(ima_sps_safe_step(loss, grad_norm_sq, inner, M, self.ell_star)) if M is not None else 0.0
        lam_next = ima_weight(run["t"] + 1, self.lam)
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                z = self.state[p]["z"]
                z.mul_(1 - group["weight_decay"] * eta)
                x_next, z_next = ima_update(p, z, p.grad, eta, lam_next)
                z.copy_(z_next)
                p.copy_(x_next)
        run["t"] += 1
        self.stats = {"step_size": eta, "grad_norm_sq": grad_norm_sq,
                      "safeguard_active": bool(M is not None and safeguard_active(grad_norm_sq, M))}
