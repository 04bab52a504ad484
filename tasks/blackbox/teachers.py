"""Population-based black-box optimisers that record what they did, generation by generation.

Each runs `generations` generations from a given initial population (N, d) on an objective f: (N, d) -> (N,) in
the box [lower, upper], and returns a Trajectory: the population after each generation, its fitness, the search
distribution (mean, full covariance) and the best-so-far value. CMA-ES's distribution is its own state (mean and
sigma^2 C, from `cma`); for the others it is the empirical Gaussian of the population, as expert-trajectory
distillation uses it. Constants are the classical defaults (PSO: Clerc's constriction values; JADE: Zhang &
Sanderson 2009).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .bbob import repair

Objective = Callable[[np.ndarray], np.ndarray]


@dataclass
class Trajectory:
    populations: np.ndarray  # (G, N, d): the population of each generation
    fitness: np.ndarray  # (G, N)
    means: np.ndarray  # (G, d): the search distribution after each generation
    covs: np.ndarray  # (G, d, d)
    best_so_far: np.ndarray  # (G,)
    best_x: np.ndarray  # (d,)
    evaluations: int


def empirical_gaussian(population: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and full (unbiased) covariance of a population (N, d)."""
    return population.mean(axis=0), np.atleast_2d(np.cov(population, rowvar=False))


class _Recorder:
    """Collects one generation at a time and keeps the best point seen."""

    def __init__(self):
        self.rows: list[tuple] = []
        self.best, self.best_x, self.evaluations = np.inf, None, 0

    def add(self, population, fitness, mean=None, cov=None):
        if mean is None:
            mean, cov = empirical_gaussian(population)
        k = int(np.argmin(fitness))
        if fitness[k] < self.best:
            self.best, self.best_x = float(fitness[k]), population[k].copy()
        self.rows.append((population.copy(), fitness.copy(), mean, cov, self.best))

    def trajectory(self) -> Trajectory:
        pops, fits, means, covs, best = (np.array(column) for column in zip(*self.rows))
        return Trajectory(pops, fits, means, covs, best, self.best_x, self.evaluations)


def _counted(f: Objective, recorder: _Recorder, lower, upper) -> Objective:
    def evaluate(X):
        recorder.evaluations += len(X)
        return np.asarray(f(repair(X, lower, upper)), dtype=float)
    return evaluate


def default_popsize(dim: int) -> int:
    """`cma`'s default population size in dimension `dim`: 4 + floor(3 ln d) (10 at d = 10)."""
    return 4 + int(3 * np.log(dim))


def cmaes(f: Objective, population0: np.ndarray, lower, upper, generations: int, seed: int,
          sigma0: float | None = None) -> Trajectory:
    """`cma`'s CMA-ES (default settings, population size N, its own bound handling in the box), started at the
    initial population's mean with sigma0 = its mean per-coordinate standard deviation. Plain clipping alone
    lets the mean drift out of the box where the clipped fitness is flat (measured: stagnation at precision
    1-3 on BBOB f1 with optima near the bounds). Its normal draws come from a generator of its own (`seed`
    is not passed to `cma`, which would seed numpy's global one, shared by threads)."""
    import cma

    recorder = _Recorder()
    evaluate = _counted(f, recorder, lower, upper)
    N, d = population0.shape
    sigma0 = float(np.mean(population0.std(axis=0))) if sigma0 is None else sigma0
    rng = np.random.default_rng(seed)  # cma's own draws, not numpy's global generator: safe in threads
    es = cma.CMAEvolutionStrategy(population0.mean(axis=0), sigma0,
                                  {"popsize": N, "seed": np.nan, "randn": lambda *shape: rng.standard_normal(shape),
                                   "verbose": -9, "tolx": 0, "tolfun": 0,
                                   "tolfunhist": 0, "tolflatfitness": 10**9, "tolstagnation": 10**9,
                                   "CMA_diagonal": False, "bounds": [list(lower), list(upper)]})
    for _ in range(generations):
        X = np.asarray(es.ask())
        values = evaluate(X)
        es.tell(list(X), values.tolist())
        recorder.add(repair(X, lower, upper), values, np.array(es.mean), es.sigma ** 2 * np.array(es.C))
    return recorder.trajectory()


def de_rand_1_bin(f: Objective, population0: np.ndarray, lower, upper, generations: int, seed: int,
                  F: float = 0.5, CR: float = 0.5) -> Trajectory:
    """scipy's differential_evolution, DE/rand/1/bin with one-to-one selection per generation ('deferred'
    updating, so a generation is one batch call). scipy does not expose its population per generation, so the
    batch calls are recorded and its selection rule (a trial replaces its parent when f_trial <= f_parent)
    replayed on them; the test checks the replay ends at scipy's own best."""
    from scipy.optimize import differential_evolution

    recorder = _Recorder()
    evaluate = _counted(f, recorder, lower, upper)
    state = {}

    def batch(X):  # scipy passes (d, S)
        trial = X.T.copy()
        values = evaluate(trial)
        if "population" not in state:  # the initial population
            state["population"], state["fitness"] = trial, values
        else:
            keep = values <= state["fitness"]
            state["population"] = np.where(keep[:, None], trial, state["population"])
            state["fitness"] = np.where(keep, values, state["fitness"])
            recorder.add(state["population"], state["fitness"])
        return values

    result = differential_evolution(batch, list(zip(lower, upper)), strategy="rand1bin", mutation=F,
                                    recombination=CR, init=population0, maxiter=generations, polish=False, tol=0,
                                    atol=0, updating="deferred", vectorized=True, rng=np.random.default_rng(seed))
    trajectory = recorder.trajectory()
    trajectory.scipy_best = float(result.fun)  # the replay's check
    return trajectory


def pso(f: Objective, population0: np.ndarray, lower, upper, generations: int, seed: int, w: float = 0.7298,
        c1: float = 1.49618, c2: float = 1.49618, v_max: float = 0.2, v_init: float = 0.1) -> Trajectory:
    """Global-best PSO; velocities clipped to v_max x range, started uniform in +-v_init x range."""
    rng = np.random.default_rng(seed)
    recorder = _Recorder()
    evaluate = _counted(f, recorder, lower, upper)
    span = np.asarray(upper) - np.asarray(lower)
    x = population0.copy()
    v = rng.uniform(-1, 1, x.shape) * v_init * span
    values = evaluate(x)
    pbest, pbest_f = x.copy(), values.copy()
    for _ in range(generations):
        g = pbest[np.argmin(pbest_f)]
        r1, r2 = rng.random(x.shape), rng.random(x.shape)
        v = np.clip(w * v + c1 * r1 * (pbest - x) + c2 * r2 * (g - x), -v_max * span, v_max * span)
        x = repair(x + v, lower, upper)
        values = evaluate(x)
        better = values < pbest_f
        pbest[better], pbest_f[better] = x[better], values[better]
        recorder.add(x, values)
    return recorder.trajectory()


def cauchy_factors(locations: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One scale factor per member: Cauchy(location, 0.1), drawn again while <= 0, truncated at 1 (JADE, SHADE)."""
    F = np.empty(len(locations))
    for i, location in enumerate(locations):
        F[i] = location + 0.1 * np.tan(np.pi * (rng.random() - 0.5))
        while F[i] <= 0:
            F[i] = location + 0.1 * np.tan(np.pi * (rng.random() - 0.5))
    return np.minimum(F, 1.0)


def current_to_pbest_trials(x: np.ndarray, values: np.ndarray, archive: np.ndarray, F: np.ndarray, CR: np.ndarray,
                            top: int, lower: np.ndarray, upper: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """DE/current-to-pbest/1/bin trials (JADE, SHADE, L-SHADE): x_i + F_i (x_pbest - x_i) + F_i (x_r1 - x~_r2),
    pbest among the `top` best, r1 from the population, r2 from the population and the archive (all distinct from
    i and each other); a coordinate out of bounds goes halfway between the parent and the violated bound; binomial
    crossover with rates CR and one forced coordinate."""
    N, d = x.shape
    pbest = x[rng.choice(np.argsort(values)[:top], N)]
    r1 = np.array([rng.choice(np.delete(np.arange(N), i)) for i in range(N)])
    pool = np.vstack([x, archive])
    r2 = np.array([rng.choice(np.setdiff1d(np.arange(len(pool)), [i, r1[i]])) for i in range(N)])
    mutant = x + F[:, None] * (pbest - x) + F[:, None] * (x[r1] - pool[r2])
    mutant = np.where(mutant < lower, (x + lower) / 2, mutant)
    mutant = np.where(mutant > upper, (x + upper) / 2, mutant)
    cross = rng.random((N, d)) < CR[:, None]
    cross[np.arange(N), rng.integers(0, d, N)] = True
    return np.where(cross, mutant, x)


def started(f: Objective, population0: np.ndarray, lower, upper, seed: int) -> tuple:
    """What a population method starts from: (its generator, its recorder, the counted objective, the bounds as
    float arrays, a copy of the first population, that population's values, evaluated and so recorded first)."""
    rng = np.random.default_rng(seed)
    recorder = _Recorder()
    evaluate = _counted(f, recorder, lower, upper)
    x = population0.copy()
    return rng, recorder, evaluate, np.asarray(lower, float), np.asarray(upper, float), x, evaluate(x)


def jade(f: Objective, population0: np.ndarray, lower, upper, generations: int, seed: int, c: float = 0.1,
         p: float = 0.05, mu_F: float = 0.5, mu_CR: float = 0.5) -> Trajectory:
    """JADE: DE/current-to-pbest/1/bin with an archive of size N and adaptive F (Cauchy) and CR (normal)."""
    rng, recorder, evaluate, lower, upper, x, values = started(f, population0, lower, upper, seed)
    N, d = x.shape
    archive = np.empty((0, d))
    top = max(1, int(round(p * N)))
    for _ in range(generations):
        CR = np.clip(rng.normal(mu_CR, 0.1, N), 0, 1)
        F = cauchy_factors(np.full(N, mu_F), rng)
        trial = current_to_pbest_trials(x, values, archive, F, CR, top, lower, upper, rng)
        trial_values = evaluate(trial)
        improved = trial_values < values
        if improved.any():
            archive = np.vstack([archive, x[improved]])
            if len(archive) > N:
                archive = archive[rng.choice(len(archive), N, replace=False)]
            S_F, S_CR = F[improved], CR[improved]
            mu_CR = (1 - c) * mu_CR + c * S_CR.mean()
            mu_F = (1 - c) * mu_F + c * (S_F ** 2).sum() / S_F.sum()
        keep = trial_values <= values
        x, values = np.where(keep[:, None], trial, x), np.where(keep, trial_values, values)
        recorder.add(x, values)
    return recorder.trajectory()


TEACHERS: dict[str, Callable[..., Trajectory]] = {"cmaes": cmaes, "de": de_rand_1_bin, "pso": pso, "jade": jade}
