"""Prox-SGD, the S-Adam paper's non-smooth baseline: heavy-ball SGD, then the l1 proximal map.

buf <- g on the first step, buf <- mu buf + g after (no dampening); p <- p - lr buf; then
p <- sign(p) max(|p| - lr l1, 0). With l1 = 0 it is torch.optim.SGD(momentum=mu, dampening=0).
"""
from __future__ import annotations

from typing import Callable

import torch

from tasks.optim.dropin import DropInOptimizer


def soft_threshold(x: torch.Tensor, threshold: float) -> torch.Tensor:
    """The proximal map of threshold * ||x||_1: shrink towards 0, zeroing |x| <= threshold."""
    return x.sign() * (x.abs() - threshold).clamp_min(0)


@torch.no_grad()
def prox_sgd_update(param: torch.Tensor, grad: torch.Tensor, state: dict, *, lr: float, momentum: float,
                    l1: float) -> None:
    """One in-place Prox-SGD step of `param`; `state` keeps the momentum buffer."""
    if "momentum_buffer" not in state:
        state["momentum_buffer"] = grad.detach().clone()
    else:
        state["momentum_buffer"].mul_(momentum).add_(grad)
    param.add_(state["momentum_buffer"], alpha=-lr)
    param.copy_(soft_threshold(param, lr * l1))


class ProxSGD(DropInOptimizer):
    """Prox-SGD on every parameter (defaults from the official scripts: lr 0.01, mu 0.9, l1 1e-4)."""

    def __init__(self, params, lr: float = 0.01, momentum: float = 0.9, l1: float = 1e-4):
        for name, value, ok in (("lr", lr, lr > 0), ("momentum", momentum, 0 <= momentum < 1), ("l1", l1, l1 >= 0)):
            if not ok:
                raise ValueError(f"ProxSGD {name}: invalid value {value!r}")
        super().__init__(params, dict(lr=lr, momentum=momentum, l1=l1))
        self.stats: dict[str, float] = {}

    def step(self, closure: Callable[..., torch.Tensor] | None = None):  # type: ignore[override]
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    prox_sgd_update(p, p.grad, self.state[p], lr=group["lr"], momentum=group["momentum"], l1=group["l1"])
        return loss
