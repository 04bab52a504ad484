"""LES's original training paradigm (the baseline): its parameter vector searched by an outer CMA-ES (`cma`) in
[-1, 1]; each meta-generation runs every candidate on the five training functions with fresh random biases (the
same for all candidates), and a candidate's meta-fitness is the median over functions of the z-score of its final
best-so-far among the meta-population (as in LES)."""
from __future__ import annotations

import time

import cma
import numpy as np
import torch

from tasks.core.seeding import derive_seed

from .functions import TRAINING_FUNCTIONS, shifted
from .les import LES
from .rollout import run_student


def set_vector(model: LES, vector: np.ndarray) -> None:
    torch.nn.utils.vector_to_parameters(torch.as_tensor(vector, dtype=torch.float64), model.parameters())


def meta_fitness(scores: np.ndarray) -> np.ndarray:
    """(candidates, functions) final best-so-far -> median over functions of the per-function z-score."""
    z = (scores - scores.mean(axis=0)) / (scores.std(axis=0) + 1e-12)
    return np.median(z, axis=1)


def meta_train(model: LES, dim: int, popsize: int, generations: int, meta_popsize: int, meta_epochs: int,
               sigma0: float, seed: int) -> dict:
    """Train `model` in place; returns the final search mean's parameters, the meta-fitness curve and the time."""
    start = time.perf_counter()
    x0 = np.clip(torch.nn.utils.parameters_to_vector(model.parameters()).detach().numpy(), -1, 1)
    rng = np.random.default_rng(seed)  # cma's draws from a generator of its own, not numpy's global one
    es = cma.CMAEvolutionStrategy(x0, sigma0, {"popsize": meta_popsize, "bounds": [-1, 1], "seed": np.nan,
                                               "randn": lambda *shape: rng.standard_normal(shape), "verbose": -9})
    curve = []
    with torch.no_grad():
        for epoch in range(meta_epochs):
            rng = np.random.default_rng(derive_seed(seed, "meta", epoch))
            functions = [shifted(name, dim, rng) for name in TRAINING_FUNCTIONS]
            run_seeds = [derive_seed(seed, "meta", epoch, name) for name in TRAINING_FUNCTIONS]
            candidates = es.ask()
            scores = np.empty((len(candidates), len(functions)))
            for i, candidate in enumerate(candidates):
                set_vector(model, candidate)
                for j, (function, run_seed) in enumerate(zip(functions, run_seeds)):
                    scores[i, j] = run_student(model, function, function.lower, function.upper, popsize,
                                               generations + 1, run_seed).f_best
            fitness = meta_fitness(scores)
            es.tell(candidates, fitness.tolist())
            curve.append(float(np.median(np.log10(np.maximum(scores, 1e-300)).mean(axis=0))))
    set_vector(model, np.asarray(es.mean))
    return {"curve": curve, "wall_time_s": time.perf_counter() - start}
