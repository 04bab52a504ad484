"""Neuroevolution on Acrobot-v1 (claim C3): each member of a population is the parameter vector of a small
leaky-ReLU MLP policy 6-H-3 (argmax of the logits picks the torque), its fitness the negated return of one
episode (minimised, as every optimiser here minimises), in the box [-5, 5]^P as the released code's
neuroevolution tasks use it.

Each generation's episodes start from fresh states drawn by the objective's own generator, one per member, so two
optimisers with the same population size and seed meet the same start states generation by generation (paired).
"""
from __future__ import annotations

import numpy as np

from tasks.blackbox.teachers import default_popsize
from tasks.core.seeding import derive_seed

from .acrobot import ACTIONS, OBSERVATION_SIZE, episode_returns, start_states
from .rollout import Run, run_cmaes, run_student
from .variants import BASELINE, TEACHER, TEACHER_DEFAULT, md

BOX = 5.0  # the released neuroevolution tasks' bounds on every parameter
LEAK = 0.01  # leaky ReLU's negative slope (torch's default)


def parameter_count(hidden: int) -> int:
    """6-16-3 has 16 x 6 + 16 + 3 x 16 + 3 = 163 parameters."""
    return hidden * OBSERVATION_SIZE + hidden + ACTIONS * hidden + ACTIONS


def mlp_policy(parameters: np.ndarray, hidden: int):
    """One policy per row of `parameters` (N, P), laid out W1 (H x 6, row-major), b1, W2 (3 x H), b2: the
    function from observations (N, 6) to actions (N,), member i acting with row i."""
    n = len(parameters)
    sizes = np.cumsum([hidden * OBSERVATION_SIZE, hidden, ACTIONS * hidden])
    w1, b1, w2, b2 = np.split(parameters, sizes, axis=1)
    w1, w2 = w1.reshape(n, hidden, OBSERVATION_SIZE), w2.reshape(n, ACTIONS, hidden)

    def act(observations: np.ndarray) -> np.ndarray:
        h = np.einsum("nho,no->nh", w1, observations) + b1
        h = np.where(h > 0, h, LEAK * h)
        return np.argmax(np.einsum("nah,nh->na", w2, h) + b2, axis=1)
    return act


class AcrobotFitness:
    """-(return of one episode) of each policy in a population (N, P); every call is one generation with fresh
    start states from the generator seeded by `seed`."""

    def __init__(self, hidden: int, steps: int, seed: int):
        self.hidden, self.steps = hidden, steps
        self.rng = np.random.default_rng(seed)

    @property
    def lower(self) -> np.ndarray:
        return np.full(parameter_count(self.hidden), -BOX)

    @property
    def upper(self) -> np.ndarray:
        return np.full(parameter_count(self.hidden), BOX)

    def __call__(self, X: np.ndarray) -> np.ndarray:
        X = np.clip(np.atleast_2d(X), -BOX, BOX)
        return -episode_returns(mlp_policy(X, self.hidden), start_states(len(X), self.rng), self.steps)


def optimiser_runs(models: dict, hidden: int, popsize: int, populations: int, steps: int, ssft_js: list[int],
                   ssft_lr: float, seed: int) -> dict[str, Run]:
    """Every variant on Acrobot-v1 from one seed: the students and CMA-ES at `popsize` for `populations`
    populations, CMA-ES at `cma`'s default population for as many whole populations as fit the same evaluations.
    Each gets its own AcrobotFitness seeded alike, so the students and CMA-ES at `popsize` meet the same start
    states."""
    def fitness() -> AcrobotFitness:
        return AcrobotFitness(hidden, steps, derive_seed(seed, "episodes"))

    box = fitness()
    runs = {BASELINE: run_student(models[BASELINE], fitness(), box.lower, box.upper, popsize, populations, seed)}
    for j in sorted(ssft_js):
        runs[md(j)] = run_student(models["md"], fitness(), box.lower, box.upper, popsize, populations, seed,
                                  ssft_j=j, ssft_lr=ssft_lr)
    runs[TEACHER] = run_cmaes(fitness(), box.lower, box.upper, popsize, populations, seed)
    small = default_popsize(len(box.lower))
    runs[TEACHER_DEFAULT] = run_cmaes(fitness(), box.lower, box.upper, small, popsize * populations // small, seed)
    return runs
