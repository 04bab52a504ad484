"""Population baselines from well-kept libraries.

- `cma_es_ranked`: CMA-ES of the `cma` package, which uses only the ranks of its samples; here the ranks come
  from sorting each population with the (noisy) comparison oracle, so it runs on comparisons alone.
- `one_plus_one`: nevergrad's (1+1)-ES (`OnePlusOne`) on exact function values: a value-based random search
  with step-size adaptation, the upper reference of the comparison methods.
"""
from __future__ import annotations

import math
import time
from functools import cmp_to_key

import numpy as np

from .oracles import ComparisonOracle, ValueOracle
from .trace import Recorder, Result, notify


def comparison_ranks(oracle: ComparisonOracle, points: list[np.ndarray]) -> np.ndarray:
    """Rank of each point (0 best) by a merge sort (Python's sort) whose every comparison asks the oracle."""
    order = sorted(range(len(points)), key=cmp_to_key(lambda i, j: int(oracle.worse(points[i], points[j]))))
    ranks = np.empty(len(points))
    ranks[order] = np.arange(len(points))
    return ranks


def cma_es_ranked(oracle: ComparisonOracle, x0: np.ndarray, sigma0: float, budget: int, seed: int,
                  record: Recorder | None = None) -> Result:
    """CMA-ES fed comparison ranks until a population's worst-case sort would pass `budget` comparisons.
    The incumbent reported to `record` is the distribution mean. cma draws from numpy's global RNG, seeded here."""
    import cma

    start, used0 = time.perf_counter(), oracle.queries
    es = cma.CMAEvolutionStrategy(np.array(x0, dtype=float), sigma0,
                                  {"seed": seed, "verbose": -9, "tolfun": 0, "tolx": 0, "tolfunhist": 0,
                                   "tolstagnation": 10**9, "tolflatfitness": 10**9, "maxfevals": math.inf})
    worst_sort = es.popsize * math.ceil(math.log2(es.popsize))
    notify(record, es.mean, 0)
    generations = 0
    while oracle.queries - used0 + worst_sort <= budget:
        points = es.ask()
        es.tell(points, comparison_ranks(oracle, points).tolist())
        generations += 1
        if notify(record, es.mean, oracle.queries - used0):
            break
    return Result(np.array(es.mean), generations, oracle.queries - used0, time.perf_counter() - start,
                  {"popsize": es.popsize, "sigma": float(es.sigma)})


def one_plus_one(values: ValueOracle, x0: np.ndarray, budget: int, seed: int, record: Recorder | None = None) -> Result:
    """nevergrad's OnePlusOne on exact values for `budget` evaluations; `record` sees the best point so far."""
    import nevergrad as ng

    start, used0 = time.perf_counter(), values.evaluations
    parametrization = ng.p.Array(init=np.array(x0, dtype=float))
    parametrization.random_state = np.random.RandomState(seed)
    optimizer = ng.optimizers.OnePlusOne(parametrization=parametrization, budget=budget)
    best_x, best_f = np.array(x0, dtype=float), math.inf
    notify(record, best_x, 0)
    for _ in range(budget):
        candidate = optimizer.ask()
        value = float(values(candidate.value))
        optimizer.tell(candidate, value)
        if value < best_f:
            best_x, best_f = np.array(candidate.value), value
        if notify(record, best_x, values.evaluations - used0):
            break
    return Result(best_x, values.evaluations - used0, values.evaluations - used0, time.perf_counter() - start)
