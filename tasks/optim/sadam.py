"""S-Adam: AdamW whose step is braked by a randomized probe of the local geometry (ICML 2026).

Each step measures the Local Geometric Instability (LGI) of the loss on the current batch from
k finite-difference directional derivatives D_i = (L(theta + sigma u_i) - L(theta)) / sigma:

    rho = Var_unbiased(D) / (mean(D^2) + eps_lgi),      damp = exp(-lambda * min(rho, rho_cap))

and takes the AdamW step scaled by `damp` (the decoupled weight decay is not scaled). rho is
scale-free and lies in [0, k/(k-1)]: about 1 where the loss is locally linear (the D_i are
zero-mean), about 1 - 2/pi at a kink |a^T x|, about 0 at a smooth minimum (the curvature term
makes every D_i positive). So the brake is strongest in gradient-dominated regions, not only
near singularities: that is the formula, and the damping is logged so the effect can be read.
"""
from __future__ import annotations

import math
from typing import Callable, Literal

import torch

from tasks.optim.adamw_rule import adamw_update

ProbeNorm = Literal["per_tensor", "global"]
PROBE_NORMS = ("per_tensor", "global")


def draw_directions(params: list[torch.Tensor], k: int, generator: torch.Generator,
                    probe_norm: ProbeNorm = "per_tensor") -> list[torch.Tensor]:
    """k Gaussian probe directions, one tensor (k, *p.shape) per parameter.

    per_tensor (the official code): each tensor's slice of a direction has unit norm, so the
    whole direction has norm sqrt(#tensors). global (the paper): unit norm over all parameters,
    i.e. uniform on the sphere S^{d-1}.
    """
    if probe_norm not in PROBE_NORMS:
        raise ValueError(f"probe_norm: must be one of {PROBE_NORMS}, got {probe_norm!r}")
    draws = [torch.randn((k, *p.shape), generator=generator, dtype=p.dtype, device=p.device) for p in params]
    squared = [d.reshape(k, -1).pow(2).sum(dim=1) for d in draws]  # (k,) per tensor
    if probe_norm == "global":
        total = torch.stack(squared).sum(dim=0).sqrt()
        norms = [total] * len(draws)
    else:
        norms = [s.sqrt() for s in squared]
    return [d / n.reshape(k, *([1] * (d.dim() - 1))) for d, n in zip(draws, norms)]


def local_geometric_instability(differences: torch.Tensor, eps_lgi: float = 1e-6) -> torch.Tensor:
    """rho from directional differences D of shape (..., k); rho = 0 when k = 1 (variance undefined)."""
    k = differences.shape[-1]
    if k == 1:
        return torch.zeros(differences.shape[:-1], dtype=differences.dtype, device=differences.device)
    variance = differences.var(dim=-1, unbiased=True)
    return variance / (differences.pow(2).mean(dim=-1) + eps_lgi)


def damping(rho: float, strength: float, rho_cap: float = 10.0) -> float:
    """The scalar brake exp(-lambda min(rho, rho_cap)) on the Adam step."""
    return math.exp(-strength * min(rho, rho_cap))


@torch.no_grad()
def probe_differences(forward: Callable[[], torch.Tensor], params: list[torch.Tensor], base_loss: float,
                      directions: list[torch.Tensor], sigma: float) -> torch.Tensor:
    """D_i = (forward() at theta + sigma u_i - base_loss) / sigma in float64, shape (k,).

    The parameters are copied back from a saved copy after every probe, so they end bit-identical
    to where they started (adding and subtracting sigma u would drift in float32).
    """
    saved = [p.detach().clone() for p in params]
    k = directions[0].shape[0]
    differences = torch.empty(k, dtype=torch.float64)
    try:
        for i in range(k):
            for p, u in zip(params, directions):
                p.add_(u[i], alpha=sigma)
            differences[i] = (float(forward()) - base_loss) / sigma
            for p, original in zip(params, saved):
                p.copy_(original)
    finally:  # a failing closure must not leave the model perturbed
        for p, original in zip(params, saved):
            p.copy_(original)
    return differences


@torch.no_grad()
def braked_adamw_update(param: torch.Tensor, grad: torch.Tensor, state: dict, *, lr: float, betas: tuple[float, float],
                        eps: float, weight_decay: float, damp: float) -> None:
    """The AdamW step with its Adam part scaled by `damp`; the decoupled weight decay keeps the
    undamped lr (spec §3.2). With damp = 1 it is torch.optim.AdamW operation for operation."""
    param.mul_(1 - lr * weight_decay)
    adamw_update(param, grad, state, lr=lr * damp, betas=betas, eps=eps, weight_decay=0.0)


class SAdam(torch.optim.Optimizer):
    """S-Adam. `step(closure)`: closure(backward=True) zeroes the gradients, evaluates the batch and
    back-propagates; closure(backward=False) only evaluates the SAME batch (the k probes call it
    under no_grad). The closure's forward must be deterministic given the batch (no dropout or BN
    statistic updates in the probes).

    One LGI scalar per parameter group (all its tensors with a gradient are perturbed jointly).
    Probe directions come from a private generator seeded by `seed`, so probing does not move the
    global RNG that shuffles the data. `stats` holds rho and damp of the last step (means over
    groups when there are several).
    """

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, k: int = 8, sigma: float = 0.01, strength: float = 2.0,
                 eps_lgi: float = 1e-6, rho_cap: float = 10.0, probe_norm: ProbeNorm = "per_tensor", seed: int = 0):
        checks = {"lr": lr > 0, "betas": all(0 <= b < 1 for b in betas), "eps": eps >= 0,
                  "weight_decay": weight_decay >= 0, "k": isinstance(k, int) and k >= 1, "sigma": sigma > 0,
                  "strength": strength >= 0, "eps_lgi": eps_lgi > 0, "rho_cap": rho_cap >= 0,
                  "probe_norm": probe_norm in PROBE_NORMS}
        values = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "k": k, "sigma": sigma,
                  "strength": strength, "eps_lgi": eps_lgi, "rho_cap": rho_cap, "probe_norm": probe_norm}
        for name, ok in checks.items():
            if not ok:
                raise ValueError(f"SAdam {name}: invalid value {values[name]!r}")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, k=k, sigma=sigma,
                                      strength=strength, eps_lgi=eps_lgi, rho_cap=rho_cap, probe_norm=probe_norm))
        self.seed = seed
        self.generator: torch.Generator | None = None
        self.stats: dict[str, float] = {}

    def _generator(self, device: torch.device) -> torch.Generator:
        if self.generator is None:
            self.generator = torch.Generator(device=device)
            self.generator.manual_seed(self.seed)
        return self.generator

    def step(self, closure: Callable[..., torch.Tensor]):  # type: ignore[override]
        if closure is None:
            raise ValueError("SAdam.step needs a closure: it re-evaluates the batch at probe points")
        with torch.enable_grad():
            loss = closure()
        base_loss = float(loss.detach())
        rhos, damps = [], []
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            if not params:
                continue
            directions = draw_directions(params, group["k"], self._generator(params[0].device), group["probe_norm"])
            differences = probe_differences(lambda: closure(backward=False), params, base_loss, directions, group["sigma"])
            rho = float(local_geometric_instability(differences, group["eps_lgi"]))
            damp = damping(rho, group["strength"], group["rho_cap"])
            for p in params:
                braked_adamw_update(p, p.grad, self.state[p], lr=group["lr"], betas=group["betas"], eps=group["eps"],
                                    weight_decay=group["weight_decay"], damp=damp)
            rhos.append(rho)
            damps.append(damp)
        self.stats = {"rho": sum(rhos) / len(rhos), "damp": sum(damps) / len(damps)} if rhos else {}
        return loss
