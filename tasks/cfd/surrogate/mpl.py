"""Modality-Protected Learning (spec §3.2 MPL; our reading of the paper's one sentence).

Two parts, both switchable by the caller:
1. per-modality loss normalisation: each modality's loss is divided by a detached EMA (beta 0.99)
   of its own value, so the single Cd target is not drowned by thousands of field targets;
2. PCGrad (Yu et al., NeurIPS 2020) on the shared trunk parameters: one gradient per modality;
   each one, visiting the others in random order, loses its component along any other gradient
   it conflicts with (negative inner product); the projected gradients are summed. Parameters
   outside the trunk (experts, gates, heads) keep their ordinary gradients.
"""
from __future__ import annotations

import torch

EMA_BETA = 0.99


def project_conflicting(flat: torch.Tensor, generator: torch.Generator) -> tuple[torch.Tensor, int, int]:
    """PCGrad on per-modality gradients flat [M, P]: (projected [M, P], conflicting pairs met, pairs checked).
    g_m is projected against the ORIGINAL g_n: g_m <- g_m - (g_m . g_n / |g_n|^2) g_n when g_m . g_n < 0."""
    projected, conflicts, checked = flat.clone(), 0, 0
    count = flat.shape[0]
    for m in range(count):
        for n in torch.randperm(count, generator=generator).tolist():
            if n == m:
                continue
            dot, norm2 = projected[m] @ flat[n], flat[n] @ flat[n]
            checked += 1
            if dot < 0 and norm2 > 0:
                projected[m] -= dot / norm2 * flat[n]
                conflicts += 1
    return projected, conflicts, checked


def pcgrad(grads: list[list[torch.Tensor]], generator: torch.Generator) -> list[torch.Tensor]:
    """The PCGrad update per parameter: grads[m][p] is modality m's gradient of parameter p (all
    modalities list the same parameters, same shapes); returns sum_m projected g_m, per parameter."""
    shapes = [g.shape for g in grads[0]]
    if any([g.shape for g in modality] != shapes for modality in grads):
        raise ValueError("grads: every modality must give one gradient per parameter with the same shapes")
    flat = torch.stack([torch.cat([g.reshape(-1) for g in modality]) for modality in grads])
    total = project_conflicting(flat, generator)[0].sum(0)
    return [chunk.view(shape) for chunk, shape in zip(total.split([s.numel() for s in shapes]), shapes)]


class LossNormalizer:
    """Divides each modality's loss by the detached EMA of its own value (started at the first value)."""

    def __init__(self, beta: float = EMA_BETA):
        if not 0 <= beta < 1:
            raise ValueError(f"beta: must be in [0, 1), got {beta}")
        self.beta, self.ema = beta, {}

    def __call__(self, losses: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        for name, loss in losses.items():
            value = float(loss.detach())
            self.ema[name] = value if name not in self.ema else self.beta * self.ema[name] + (1 - self.beta) * value
        return {name: loss / max(self.ema[name], 1e-12) for name, loss in losses.items()}


def backward(losses: dict[str, torch.Tensor], extra: torch.Tensor, shared: list[torch.nn.Parameter],
             normalizer: LossNormalizer | None, generator: torch.Generator | None) -> dict[str, float]:
    """Fills .grad of every parameter for the loss sum(normalised modality losses) + extra.

    normalizer None: no normalisation; generator None: no PCGrad (the plain summed loss). With
    PCGrad, the `shared` parameters get sum_m PCGrad(g_m) + d(extra)/d(shared) instead of the
    plain sum. Returns {conflict_rate} (conflicting pairs / pairs checked; nan without PCGrad)."""
    weighted = normalizer(losses) if normalizer is not None else losses
    total = sum(weighted.values()) + extra
    if generator is None:
        total.backward()
        return {"conflict_rate": float("nan")}
    per_modality = [torch.autograd.grad(loss, shared, retain_graph=True, allow_unused=True)
                    for loss in weighted.values()]
    flat = torch.stack([torch.cat([(g if g is not None else torch.zeros_like(p)).reshape(-1)
                                   for g, p in zip(grads, shared)]) for grads in per_modality])
    projected, conflicts, checked = project_conflicting(flat, generator)
    total.backward()
    correction = projected.sum(0) - flat.sum(0)  # swap the plain sum for the projected one
    for p, chunk in zip(shared, correction.split([p.numel() for p in shared])):
        p.grad += chunk.view_as(p)
    return {"conflict_rate": conflicts / max(checked, 1)}
