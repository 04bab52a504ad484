"""Stochastic proximal methods, batched over B runs with their own step sizes, keeping the outputs the last-iterate
analysis compares: the last iterate x_T, the uniform average (1/T) sum_{k=1..T} x_k and the suffix average over
k in (T/2, T].

x_{k+1} = prox_step(x_k - gamma grad f(x_k; xi_k)): the problem's prox_step is the exact prox of gamma g
(Prox-SGD) or of gamma m g_j for one random component j (RIP).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import torch


@dataclass
class ProxRun:
    """Outputs of B runs: iterates (B, ...), F of the last iterate at `record_steps` (B, len), wall seconds."""

    last: torch.Tensor
    average: torch.Tensor
    suffix_average: torch.Tensor
    record_steps: list[int]
    record_values: torch.Tensor
    wall_s: float


def horizon_step(c: float, smoothness: float, T: int, reference_T: int = 1000) -> float:
    """gamma = c sqrt(reference_T) / (L-hat sqrt(T)): constant over a run, shrinking with the horizon T."""
    return c * math.sqrt(reference_T) / (smoothness * math.sqrt(T))


def log_steps(T: int, points: int = 20) -> list[int]:
    """Log-spaced iteration counts in 1..T (T included)."""
    return sorted(set(np.unique(np.geomspace(1, T, points).round().astype(int)).tolist()) | {T})


def run_prox(problem, gammas: torch.Tensor, T: int, generator: torch.Generator, record_points: int = 20) -> ProxRun:
    """T steps of the problem's stochastic proximal method from zero, one run per step size in `gammas` (B,)."""
    B = len(gammas)
    x = problem.zeros(B)
    view = (B,) + (1,) * (x.dim() - 1)
    step = gammas.reshape(view)
    average, suffix = torch.zeros_like(x), torch.zeros_like(x)
    half = T // 2
    record = log_steps(T, record_points)
    wanted, values = set(record), []
    started = time.perf_counter()
    for k in range(1, T + 1):
        x = problem.prox_step(x - step * problem.stochastic_gradient(x, generator), gammas, generator)
        average += (x - average) / k
        if k > half:
            suffix += (x - suffix) / (k - half)
        if k in wanted:
            values.append(problem.value(x))
    return ProxRun(x, average, suffix, record, torch.stack(values, 1), time.perf_counter() - started)
