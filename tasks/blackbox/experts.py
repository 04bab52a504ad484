"""The other three of MetaDistill's seven classical teachers: a real-coded GA, SHADE and L-SHADE, recording their
runs like teachers.py (population, fitness, the population's empirical Gaussian and best-so-far per generation);
EXPERTS is all seven by name.

Constants: GA with tournaments of 3, SBX crossover (probability 0.9, eta 15) and polynomial mutation (probability
1/d per coordinate, eta 20), its next population the best N of parents and children; SHADE (Tanabe & Fukunaga
2013) and L-SHADE (Tanabe & Fukunaga 2014) with p = 0.05, a success-history memory of H = 20 entries, an archive
of N (L-SHADE: archive factor 1.0 of the current size); L-SHADE shrinks its population linearly in the
evaluations from N to 4 over a plan of N x generations evaluations. A population that has shrunk is recorded in
its first rows, the rest NaN with fitness +inf, so every trajectory keeps the shape (G, N, d).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .teachers import (TEACHERS, Objective, Trajectory, cauchy_factors, current_to_pbest_trials, empirical_gaussian,
                       started)

L_SHADE_SMALLEST = 4  # L-SHADE's final population size


def tournament(values: np.ndarray, count: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """`count` winners' indices, each the best of `size` members drawn with replacement."""
    entrants = rng.integers(0, len(values), (count, size))
    return entrants[np.arange(count), np.argmin(values[entrants], axis=1)]


def sbx(parents1: np.ndarray, parents2: np.ndarray, probability: float, eta: float,
        rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Simulated binary crossover: with `probability` a pair recombines, each coordinate with chance 1/2, the
    children spread around the parents' midpoint by the factor beta whose density has index `eta`."""
    u = rng.random(parents1.shape)
    beta = np.where(u <= 0.5, (2 * u) ** (1 / (eta + 1)), (1 / (2 * (1 - u))) ** (1 / (eta + 1)))
    mixing = (rng.random(parents1.shape) < 0.5) & (rng.random(len(parents1)) < probability)[:, None]
    middle, half_gap = (parents1 + parents2) / 2, (parents1 - parents2) / 2
    return (np.where(mixing, middle + beta * half_gap, parents1),
            np.where(mixing, middle - beta * half_gap, parents2))


def polynomial_mutation(x: np.ndarray, probability: float, eta: float, lower: np.ndarray, upper: np.ndarray,
                        rng: np.random.Generator) -> np.ndarray:
    """Deb's bounded polynomial mutation: each coordinate with `probability` moves by a polynomially distributed
    step that cannot leave [lower, upper]."""
    span = upper - lower
    below, above = (x - lower) / span, (upper - x) / span
    u = rng.random(x.shape)
    power = 1 / (eta + 1)
    down = (2 * u + (1 - 2 * u) * (1 - below) ** (eta + 1)) ** power - 1
    up = 1 - (2 * (1 - u) + 2 * (u - 0.5) * (1 - above) ** (eta + 1)) ** power
    step = np.where(u < 0.5, down, up)
    mutate = rng.random(x.shape) < probability
    return np.clip(np.where(mutate, x + step * span, x), lower, upper)


def ga(f: Objective, population0: np.ndarray, lower, upper, generations: int, seed: int, tournament_size: int = 3,
       crossover: float = 0.9, eta_c: float = 15.0, eta_m: float = 20.0) -> Trajectory:
    """Real-coded GA: N children from tournament-selected pairs by SBX and polynomial mutation (1/d per
    coordinate), the next population the best N of parents and children."""
    rng, recorder, evaluate, lower, upper, x, values = started(f, population0, lower, upper, seed)
    N, d = x.shape
    pairs = (N + 1) // 2
    for _ in range(generations):
        mothers, fathers = (x[tournament(values, pairs, tournament_size, rng)] for _ in range(2))
        children = np.vstack(sbx(mothers, fathers, crossover, eta_c, rng))[:N]
        children = polynomial_mutation(np.clip(children, lower, upper), 1 / d, eta_m, lower, upper, rng)
        pool, pool_values = np.vstack([x, children]), np.concatenate([values, evaluate(children)])
        survivors = np.argsort(pool_values, kind="stable")[:N]
        x, values = pool[survivors], pool_values[survivors]
        recorder.add(x, values)
    return recorder.trajectory()


class SuccessHistory:
    """SHADE's memory of H (mean CR, location F) pairs, both 0.5 at first, rewritten in turn from each
    generation's successful parameters weighted by their improvements. L-SHADE's CR entry becomes terminal (NaN:
    CR = 0 from then on) once every successful CR of a generation is 0, and its CR mean is a Lehmer mean."""

    def __init__(self, size: int, linear: bool):
        self.mean_cr, self.location_f = np.full(size, 0.5), np.full(size, 0.5)
        self.linear, self.next = linear, 0

    def draw(self, count: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        slot = rng.integers(0, len(self.mean_cr), count)
        CR = np.clip(rng.normal(self.mean_cr[slot], 0.1), 0, 1)
        CR = np.where(np.isnan(self.mean_cr[slot]), 0.0, CR)
        return CR, cauchy_factors(self.location_f[slot], rng)

    def update(self, F: np.ndarray, CR: np.ndarray, gains: np.ndarray) -> None:
        weights = gains / gains.sum()
        self.location_f[self.next] = (weights * F ** 2).sum() / (weights * F).sum()
        if self.linear:
            self.mean_cr[self.next] = (np.nan if np.isnan(self.mean_cr[self.next]) or CR.max() == 0
                                       else (weights * CR ** 2).sum() / (weights * CR).sum())
        else:
            self.mean_cr[self.next] = (weights * CR).sum()
        self.next = (self.next + 1) % len(self.mean_cr)


def _padded(x: np.ndarray, values: np.ndarray, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """A shrunk population in the first rows of (rows, d), NaN below, fitness +inf below."""
    population, fitness = np.full((rows, x.shape[1]), np.nan), np.full(rows, np.inf)
    population[:len(x)], fitness[:len(x)] = x, values
    return population, fitness


def _shade(f: Objective, population0: np.ndarray, lower, upper, generations: int, seed: int, p: float,
           memory: int, shrinking: bool) -> Trajectory:
    rng, recorder, evaluate, lower, upper, x, values = started(f, population0, lower, upper, seed)
    N0, d = x.shape
    archive, history = np.empty((0, d)), SuccessHistory(memory, linear=shrinking)
    plan = N0 * generations  # L-SHADE's evaluations over which the population shrinks from N0 to 4
    for _ in range(generations):
        N = len(x)
        CR, F = history.draw(N, rng)
        trial = current_to_pbest_trials(x, values, archive, F, CR, max(1, int(round(p * N))), lower, upper, rng)
        trial_values = evaluate(trial)
        improved = trial_values < values
        if improved.any():
            archive = np.vstack([archive, x[improved]])
            history.update(F[improved], CR[improved], values[improved] - trial_values[improved])
        keep = trial_values <= values
        x, values = np.where(keep[:, None], trial, x), np.where(keep, trial_values, values)
        if shrinking:
            size = max(L_SHADE_SMALLEST, int(round(N0 + (L_SHADE_SMALLEST - N0) * recorder.evaluations / plan)))
            order = np.argsort(values, kind="stable")[:min(size, N)]
            x, values = x[order], values[order]
        if len(archive) > len(x):
            archive = archive[rng.choice(len(archive), len(x), replace=False)]
        mean, cov = empirical_gaussian(x)
        recorder.add(*_padded(x, values, N0), mean, cov)
    return recorder.trajectory()


def shade(f: Objective, population0: np.ndarray, lower, upper, generations: int, seed: int, p: float = 0.05,
          memory: int = 20) -> Trajectory:
    """SHADE: JADE's mutation with F and CR drawn around a success-history memory."""
    return _shade(f, population0, lower, upper, generations, seed, p, memory, shrinking=False)


def lshade(f: Objective, population0: np.ndarray, lower, upper, generations: int, seed: int, p: float = 0.05,
           memory: int = 20) -> Trajectory:
    """L-SHADE: SHADE with linear population size reduction and a terminal CR memory."""
    return _shade(f, population0, lower, upper, generations, seed, p, memory, shrinking=True)


EXPERTS: dict[str, Callable[..., Trajectory]] = TEACHERS | {"ga": ga, "shade": shade, "lshade": lshade}
