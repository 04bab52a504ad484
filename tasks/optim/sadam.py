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

import inspect
import math
from typing import Callable, Literal

import torch

from tasks.optim.adamw_rule import adamw_update
from tasks.optim.dropin import DropInOptimizer

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


PROBE_RNG = "probe_rng"  # the key of the probe generator's state in SAdam.state


def accepts_backward(closure: Callable) -> bool:
    """Whether `closure` takes a `backward` argument (the project's convention: closure(backward=False) is
    forward-only), read from its signature; False where there is none to read."""
    try:
        return "backward" in inspect.signature(closure).parameters
    except (TypeError, ValueError):
        return False


class SAdam(DropInOptimizer):
    """S-Adam, a drop-in torch.optim.Optimizer.

    `loss = opt.step(closure, probe=None)`. `closure()` is torch's: it zeroes the gradients, evaluates the batch,
    back-propagates and returns the loss; it is called once, at the current weights, under enable_grad. The k
    probes of a group then re-evaluate the SAME batch at theta + sigma u_i, under no_grad, with the first of:
    - `probe()`: a forward-only function of the batch (returns the loss, touches no gradient);
    - `closure(backward=False)`, when the closure takes a `backward` argument (tasks.train.loop's closures):
      it must only evaluate the loss and leave .grad alone;
    - the standard closure itself: each probe then also back-propagates (k extra backward passes), and the
      gradients of this optimizer's parameters are saved before the probes and put back after them, so the
      update uses the gradient at theta. Gradients of parameters outside this optimizer end as the last probe
      left them.
    The forward must be deterministic given the batch (no dropout or BN statistic updates in the probes).
    With the brake off (strength = lambda = 0, or rho_cap = 0) damp = 1 whatever rho is: no probe runs, the
    closure is optional (step() after your own backward works) and S-Adam is torch.optim.AdamW exactly.

    One LGI scalar per parameter group (all its tensors with a gradient are perturbed jointly); every group is
    probed at the weights the step started from, before any group is updated. Probe directions come from a
    private generator seeded by `seed`, so probing does not move the global RNG that shuffles the data; its
    state lives in `state` (state_dict, deepcopy and pickle carry it, and a resumed run draws the same
    directions as an uninterrupted one). `stats` holds rho (means over the probed groups) and damp (means
    over the groups) of the last step; rho is absent when no group was probed.
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
        self.stats: dict[str, float] = {}

    @staticmethod
    def brake_on(group: dict) -> bool:
        """False when damp = exp(-lambda min(rho, rho_cap)) is 1 for every rho: the probes are skipped."""
        return group["strength"] != 0 and group["rho_cap"] != 0

    def _generator(self, device: torch.device) -> torch.Generator:
        """The probe generator where the last step left it (self.state), or freshly seeded from `seed`."""
        generator = torch.Generator(device=device)
        if PROBE_RNG in self.state:
            generator.set_state(self.state[PROBE_RNG]["state"])
        else:
            generator.manual_seed(self.seed)
        return generator

    def _forward_only(self, closure: Callable[..., torch.Tensor], probe: Callable[[], torch.Tensor] | None):
        """(forward, restore): the probes' loss function and what puts the gradients back after them."""
        if probe is not None:
            return probe, lambda: None
        if accepts_backward(closure):
            return lambda: closure(backward=False), lambda: None
        saved = {p: None if p.grad is None else p.grad.clone() for g in self.param_groups for p in g["params"]}

        def forward() -> torch.Tensor:
            with torch.enable_grad():
                return closure()

        def restore() -> None:
            for p, grad in saved.items():
                p.grad = grad
        return forward, restore

    def step(self, closure: Callable[..., torch.Tensor] | None = None,  # type: ignore[override]
             probe: Callable[[], torch.Tensor] | None = None):
        if closure is None and any(self.brake_on(g) for g in self.param_groups):
            raise ValueError("SAdam.step needs a closure: it re-evaluates the batch at probe points")
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        groups = [(g, [p for p in g["params"] if p.grad is not None]) for g in self.param_groups]
        damps, rhos = {}, []
        if any(params and self.brake_on(g) for g, params in groups):
            base_loss = float(loss.detach())
            forward, restore = self._forward_only(closure, probe)
            generator = None
            try:
                for index, (group, params) in enumerate(groups):
                    if not params or not self.brake_on(group):
                        continue
                    if generator is None:  # one generator for all groups, on the first probed group's device
                        generator = self._generator(params[0].device)
                    directions = draw_directions(params, group["k"], generator, group["probe_norm"])
                    differences = probe_differences(forward, params, base_loss, directions, group["sigma"])
                    rho = float(local_geometric_instability(differences, group["eps_lgi"]))
                    damps[index] = damping(rho, group["strength"], group["rho_cap"])
                    rhos.append(rho)
            finally:
                restore()
            self.state[PROBE_RNG] = {"state": generator.get_state()}
        used = []
        for index, (group, params) in enumerate(groups):
            if not params:
                continue
            damp = damps.get(index, 1.0)
            for p in params:
                braked_adamw_update(p, p.grad, self.state[p], lr=group["lr"], betas=group["betas"], eps=group["eps"],
                                    weight_decay=group["weight_decay"], damp=damp)
            used.append(damp)
        self.stats = {"rho": sum(rhos) / len(rhos)} if rhos else {}
        if used:
            self.stats["damp"] = sum(used) / len(used)
        return loss
