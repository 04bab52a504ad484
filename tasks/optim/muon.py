"""Muon (momentum + orthogonalised update for matrices, aux AdamW for the rest) and SoftMuon.

The math is pure functions on tensors (Newton-Schulz, exact polar factor, the soft polar map Phi_tau,
the momentum rule); the optimizer classes keep state and walk parameter groups.
"""
from __future__ import annotations

import math
from typing import Literal

import torch

from tasks.optim.adamw_rule import adamw_update
from tasks.optim.dropin import DropInOptimizer
from tasks.optim.temperature import TemperatureSchedule, Transition, algebraic_c_eps, transition_state

# Keller Jordan's quintic: coefficients chosen to maximise the slope at zero, so few steps push small
# singular values up fast; the result is U S' V^T with S' roughly in [0.7, 1.2], not exactly U V^T.
NS_COEFFICIENTS = (3.4445, -4.7750, 2.0315)

ORTHOGONALIZERS = ("ns5", "svd")
MOMENTUM_FORMS = ("ema", "sum")
MOMENTUM_INITS = ("zeros", "first_grad")
SOFT_MODES = ("exact", "iterative")
AUX_DEFAULTS = {"lr": 3e-4, "betas": (0.9, 0.95), "eps": 1e-10, "weight_decay": 0.0}


def _work_dtype(X: torch.Tensor) -> torch.dtype:
    """float64 stays float64 (tests); anything else runs in float32 (bf16 on CPU is slow and imprecise)."""
    return torch.float64 if X.dtype == torch.float64 else torch.float32


def newton_schulz5(X: torch.Tensor, steps: int = 5, eps: float = 1e-7) -> torch.Tensor:
    """Approximate polar factor of a 2-D X by `steps` quintic Newton-Schulz iterations.

    Frobenius pre-normalisation puts every singular value in (0, 1]; tall matrices are transposed so the
    Gram matrix X X^T is the small one.
    """
    if X.ndim != 2:
        raise ValueError(f"newton_schulz5: X must be 2-D, got shape {tuple(X.shape)}")
    a, b, c = NS_COEFFICIENTS
    Y = X.to(_work_dtype(X))
    tall = Y.shape[0] > Y.shape[1]
    if tall:
        Y = Y.T
    Y = Y / (Y.norm() + eps)
    for _ in range(steps):
        A = Y @ Y.T
        B = b * A + c * A @ A
        Y = a * Y + B @ Y
    return (Y.T if tall else Y).to(X.dtype)


def polar_factor(X: torch.Tensor) -> torch.Tensor:
    """Exact U V^T of a 2-D X from its thin SVD."""
    U, _, Vh = torch.linalg.svd(X.to(_work_dtype(X)), full_matrices=False)
    return (U @ Vh).to(X.dtype)


def orthogonalize(X: torch.Tensor, method: Literal["ns5", "svd"] = "ns5", ns_steps: int = 5) -> torch.Tensor:
    if method == "ns5":
        return newton_schulz5(X, ns_steps)
    if method == "svd":
        return polar_factor(X)
    raise ValueError(f"orthogonalizer: must be one of {ORTHOGONALIZERS}, got {method!r}")


def algebraic_soft_sign(x: torch.Tensor) -> torch.Tensor:
    """phi(x) = x / sqrt(1 + x^2): the scalar map SoftMuon applies to singular values."""
    return x / torch.sqrt(1 + x * x)


def soft_polar_exact(X: torch.Tensor, tau: float) -> tuple[torch.Tensor, torch.Tensor]:
    """(Phi_tau(X) = U phi(tau S) V^T, S) by thin SVD; S is returned for the saturation statistic."""
    U, S, Vh = torch.linalg.svd(X.to(_work_dtype(X)), full_matrices=False)
    return (U * algebraic_soft_sign(tau * S)) @ Vh, S


def soft_polar_iterative(X: torch.Tensor, tau: float, ns_steps: int = 5) -> torch.Tensor:
    """Phi_tau(X) = (X X^T + tau^-2 I)^(-1/2) X by a coupled Newton-Schulz inverse square root (wide orientation).

    After `ns_steps` iterations small eigenvalues are far from converged (each step grows them about 1.5x), so
    this under-scales small singular values compared with the exact map, as the official GPU path does.
    """
    Y = X.to(_work_dtype(X))
    tall = Y.shape[0] > Y.shape[1]
    if tall:
        Y = Y.T
    eye = torch.eye(Y.shape[0], dtype=Y.dtype, device=Y.device)
    A = Y @ Y.T + eye / tau**2
    a = A.norm()
    P, Z = A / a, eye
    for _ in range(ns_steps):
        T = (3 * eye - Z @ P) / 2
        P, Z = P @ T, T @ Z
    out = Z @ Y / a.sqrt()
    return out.T if tall else out


def muon_scale(shape) -> float:
    """sqrt(max(1, rows/cols)): keeps the update RMS comparable across rectangular shapes."""
    rows, cols = shape[0], math.prod(shape[1:])
    return math.sqrt(max(1.0, rows / cols))


def as_matrix(t: torch.Tensor) -> torch.Tensor:
    """2-D view of a parameter: conv kernels (out, in, kh, kw) -> (out, in*kh*kw)."""
    if t.ndim < 2:
        raise ValueError(f"as_matrix: need a tensor with >= 2 dims, got shape {tuple(t.shape)}")
    return t.reshape(t.shape[0], -1)


def muon_momentum(grad: torch.Tensor, buf: torch.Tensor, *, momentum: float, nesterov: bool,
                  form: Literal["ema", "sum"]) -> torch.Tensor:
    """Update the momentum buffer in place and return the direction to orthogonalise.

    ema: M <- mu M + (1 - mu) G, direction (1 - mu) G + mu M (nesterov) or M.
    sum: B <- mu B + G, direction G + mu B (nesterov) or B. The two differ by a scalar, which the
    orthogonalisation removes.
    """
    if form == "ema":
        buf.lerp_(grad, 1 - momentum)
        return grad.lerp(buf, momentum) if nesterov else buf
    if form == "sum":
        buf.mul_(momentum).add_(grad)
        return grad + momentum * buf if nesterov else buf
    raise ValueError(f"momentum_form: must be one of {MOMENTUM_FORMS}, got {form!r}")


def muon_param_groups(matrix_params, other_params, *, lr: float, aux_lr: float = AUX_DEFAULTS["lr"],
                      **muon_options) -> list[dict]:
    """Param groups for Muon/SoftMuon: matrices get Muon with `muon_options`, the rest the aux AdamW."""
    groups = [{"params": list(matrix_params), "use_muon": True, "lr": lr, **muon_options},
              {"params": list(other_params), "use_muon": False, "lr": aux_lr}]
    return [g for g in groups if g["params"]]


def _check_choice(name: str, value, allowed) -> None:
    if value not in allowed:
        raise ValueError(f"{name}: must be one of {allowed}, got {value!r}")


class Muon(DropInOptimizer):
    """Muon for groups with use_muon=True (matrices, conv kernels), AdamW (aux_*) for groups with use_muon=False.

    A plain iterable of tensors is one Muon group. Update per matrix parameter:
    theta <- theta (1 - lr wd) - lr sqrt(max(1, rows/cols)) orth(direction).
    `stats` after each step: {"phase": "sign"} (the hard map throughout).
    """

    def __init__(self, params, lr: float = 0.02, momentum: float = 0.95, nesterov: bool = True,
                 weight_decay: float = 0.0, ns_steps: int = 5, orthogonalizer: str = "ns5",
                 momentum_form: str = "ema", momentum_init: str = "zeros"):
        if lr < 0:
            raise ValueError(f"lr: must be >= 0, got {lr}")
        if not 0 <= momentum < 1:
            raise ValueError(f"momentum: must be in [0, 1), got {momentum}")
        if weight_decay < 0:
            raise ValueError(f"weight_decay: must be >= 0, got {weight_decay}")
        if ns_steps < 1:
            raise ValueError(f"ns_steps: must be >= 1, got {ns_steps}")
        defaults = dict(lr=lr, momentum=momentum, nesterov=nesterov, weight_decay=weight_decay, ns_steps=ns_steps,
                        orthogonalizer=orthogonalizer, momentum_form=momentum_form, momentum_init=momentum_init,
                        use_muon=True)
        super().__init__(params, defaults)
        self.stats: dict = {}

    def add_param_group(self, param_group: dict) -> None:
        if not param_group.get("use_muon", True):
            for key, value in AUX_DEFAULTS.items():  # before torch fills in the Muon defaults
                param_group.setdefault(key, value)
        super().add_param_group(param_group)
        group = self.param_groups[-1]
        if group["use_muon"]:
            _check_choice("orthogonalizer", group["orthogonalizer"], ORTHOGONALIZERS)
            _check_choice("momentum_form", group["momentum_form"], MOMENTUM_FORMS)
            _check_choice("momentum_init", group["momentum_init"], MOMENTUM_INITS)
            for p in group["params"]:
                if p.ndim < 2:
                    raise ValueError(f"Muon group: parameters must have >= 2 dims (use_muon=False for the rest), "
                                     f"got shape {tuple(p.shape)}")

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        self._begin_step()
        for index, group in enumerate(self.param_groups):
            params = [p for p in group["params"] if p.grad is not None]
            if not group["use_muon"]:
                for p in params:
                    adamw_update(p, p.grad, self.state[p], lr=group["lr"], betas=group["betas"], eps=group["eps"],
                                 weight_decay=group["weight_decay"])
                continue
            directions = [as_matrix(self._direction(group, p)) for p in params]
            updates = self._matrix_updates(index, group, [as_matrix(p.grad) for p in params], directions)
            for p, update in zip(params, updates):
                p.mul_(1 - group["lr"] * group["weight_decay"])
                p.add_(update.view_as(p).to(p.dtype), alpha=-group["lr"] * muon_scale(p.shape))
        return loss

    def _begin_step(self) -> None:
        self.stats = {"phase": "sign"}

    def _direction(self, group: dict, p: torch.Tensor) -> torch.Tensor:
        state = self.state[p]
        if "momentum_buffer" not in state:
            first = group["momentum_init"] == "first_grad"
            state["momentum_buffer"] = p.grad.clone() if first else torch.zeros_like(p.grad)
            if first:  # the buffer already holds this step's gradient
                return p.grad.clone()
        return muon_momentum(p.grad, state["momentum_buffer"], momentum=group["momentum"], nesterov=group["nesterov"],
                             form=group["momentum_form"])

    def _matrix_updates(self, index: int, group: dict, grads: list[torch.Tensor],
                        directions: list[torch.Tensor]) -> list[torch.Tensor]:
        return [orthogonalize(d, group["orthogonalizer"], group["ns_steps"]) for d in directions]


class SoftMuon(Muon):
    """Muon for the first floor(alpha_sign * total_steps) steps, then Phi_tau with a precomputed temperature schedule.

    The schedule is built once, at step T_sign + 1, per Muon group, from the singular values of the raw gradients
    of the group's matrices (folded-Cauchy fit, c_eps = phi^-1(1 - eps) = 70.705 at eps = 1e-4, tau in
    [1, tau_max]); it lives in the state_dict. soft_mode: "exact" (thin SVD) or "iterative" (coupled NS, soft_ns_steps).
    `stats`: phase ("sign" / "soft"), tau and the saturated fraction of singular values (phi(tau s) >= 1 - eps)
    of the first Muon group.
    """

    def __init__(self, params, *, total_steps: int, alpha_sign: float = 0.9, eps: float = 1e-4, tau_max: float = 1e9,
                 newton_steps: int = 10, soft_mode: str = "exact", soft_ns_steps: int = 5, **muon_options):
        _check_choice("soft_mode", soft_mode, SOFT_MODES)
        if not 0 < eps < 1:
            raise ValueError(f"eps: must be in (0, 1), got {eps}")
        if tau_max < 1:
            raise ValueError(f"tau_max: must be >= 1, got {tau_max}")
        self.transition = Transition(total_steps=total_steps, alpha_sign=alpha_sign)
        self.eps, self.tau_max, self.newton_steps = eps, tau_max, newton_steps
        self.soft_mode, self.soft_ns_steps = soft_mode, soft_ns_steps
        super().__init__(params, **muon_options)

    def _begin_step(self) -> None:
        clock = transition_state(self)
        clock["step"] += 1
        self.stats = {"phase": "sign" if self.transition.in_sign_phase(clock["step"]) else "soft"}

    def _matrix_updates(self, index, group, grads, directions):
        clock = transition_state(self)
        k = clock["step"]
        if self.transition.in_sign_phase(k):
            return super()._matrix_updates(index, group, grads, directions)
        if self.transition.builds_at(k):
            values = torch.cat([torch.linalg.svdvals(g.to(torch.float64)) for g in grads])
            clock["schedules"][index] = TemperatureSchedule.build(
                values, self.transition.length, algebraic_c_eps(self.eps), tau_max=self.tau_max,
                newton_steps=self.newton_steps).taus
        tau = TemperatureSchedule(clock["schedules"][index]).at(self.transition.index(k))
        updates, saturated, total = [], 0, 0
        for d in directions:
            if self.soft_mode == "exact":
                update, S = soft_polar_exact(d, tau)
            else:
                update, S = soft_polar_iterative(d, tau, self.soft_ns_steps), torch.linalg.svdvals(d.float())
            updates.append(update)
            saturated += int((algebraic_soft_sign(tau * S.double()) >= 1 - self.eps).sum())
            total += S.numel()
        if "tau" not in self.stats:
            self.stats.update(tau=tau, saturated_fraction=saturated / max(total, 1))
        return updates
