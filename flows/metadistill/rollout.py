"""A learned optimiser run on a black-box objective within a budget of function evaluations, optionally with
test-time self-supervised fine-tuning (SSFT).

One run: the initial population (uniform in the box), then student generations while the next one still fits the
budget (N = 32, budget 2000: 32 + 61 x 32 = 1984 evaluations). SSFT (md_jJ): after each generation, one Adam step
on the parameters for loss = (mean f of the new population - mean f J generations earlier) / |the latter|. The
objective is a black box (IOH, a user's function), so the loss's gradient through the sampled population is the
score-function estimate from the population's own evaluations (with the mean as baseline): no extra evaluations.
"""
from __future__ import annotations

import copy
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from .les import LES, LESState

DTYPE = torch.float64


@dataclass
class Run:
    best_generation: np.ndarray  # (G,): best f of each generation's population
    best_so_far: np.ndarray  # (G,)
    evaluations: np.ndarray  # (G,): evaluations used after each generation
    x_best: np.ndarray
    f_best: float
    wall_time_s: float


def populations_in_budget(popsize: int, budget: int) -> int:
    """How many populations of `popsize` fit in `budget` evaluations (the initial one included)."""
    return budget // popsize


def ssft_surrogate(state: LESState, eps: torch.Tensor, f_new: np.ndarray, reference: float) -> torch.Tensor:
    """A scalar whose gradient in the parameters is the score-function estimate of
    d[(mean f(m + sigma eps)) / |reference|], through the new distribution (m, sigma)."""
    centred = torch.as_tensor(f_new - f_new.mean(), dtype=DTYPE).unsqueeze(1)  # (N, 1)
    grad_m = (centred * eps).mean(0) / state.sigma.detach()
    grad_sigma = (centred * (eps ** 2 - 1)).mean(0) / state.sigma.detach()
    return ((grad_m * state.m).sum() + (grad_sigma * state.sigma).sum()) / max(abs(reference), 1e-300)


def run_student(model: LES, f: Callable[[np.ndarray], np.ndarray], lower: np.ndarray, upper: np.ndarray,
                popsize: int, populations: int, seed: int, ssft_j: int = 0, ssft_lr: float = 1e-4) -> Run:
    """`populations` generations of `popsize` (the initial one included) of LES `model` on f: (N, d) -> (N,)."""
    start = time.perf_counter()
    generator = torch.Generator().manual_seed(seed)
    lo, hi = torch.as_tensor(lower, dtype=DTYPE), torch.as_tensor(upper, dtype=DTYPE)
    model = copy.deepcopy(model) if ssft_j else model
    optimiser = torch.optim.Adam(model.parameters(), lr=ssft_lr) if ssft_j else None
    x = lo + (hi - lo) * torch.rand(popsize, len(lo), generator=generator, dtype=DTYPE)
    state = model.initial_state(lo, hi, generator)
    values = np.asarray(f(x.numpy()), dtype=float)
    best_gen, best_so_far, means = [values.min()], [values.min()], [values.mean()]
    x_best, f_best = x[np.argmin(values)].numpy().copy(), float(values.min())
    for _ in range(populations - 1):
        with torch.set_grad_enabled(bool(ssft_j)):
            state = model.update(state, x, torch.as_tensor(values, dtype=DTYPE))
            x, eps = model.sample(state, popsize, lo, hi, generator)
        values = np.asarray(f(x.detach().numpy()), dtype=float)
        means.append(values.mean())
        if ssft_j and len(means) > ssft_j:
            optimiser.zero_grad()
            ssft_surrogate(state, eps, values, means[-1 - ssft_j]).backward()
            optimiser.step()
        state, x = state.detach(), x.detach()
        if values.min() < f_best:
            x_best, f_best = x[np.argmin(values)].numpy().copy(), float(values.min())
        best_gen.append(values.min())
        best_so_far.append(f_best)
    evaluations = popsize * np.arange(1, populations + 1)
    return Run(np.array(best_gen), np.array(best_so_far), evaluations, x_best, f_best, time.perf_counter() - start)


def run_cmaes(f: Callable[[np.ndarray], np.ndarray], lower: np.ndarray, upper: np.ndarray, popsize: int,
              populations: int, seed: int) -> Run:
    """The teacher CMA-ES (`cma`) at the same population size and number of populations, started like the
    student (a uniform initial population's mean and spread)."""
    from tasks.blackbox.teachers import cmaes

    start = time.perf_counter()
    x0 = np.random.default_rng(seed).uniform(lower, upper, (popsize, len(lower)))
    trajectory = cmaes(f, x0, lower, upper, populations, seed)
    best_gen = trajectory.fitness.min(axis=1)
    return Run(best_gen, trajectory.best_so_far, popsize * np.arange(1, populations + 1), trajectory.best_x,
               float(trajectory.best_so_far[-1]), time.perf_counter() - start)
