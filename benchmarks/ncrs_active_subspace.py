"""NCRS in R^d: comparisons and wall time to a target accuracy against the dimension, with the peak traced memory,
in one run (issue 19).

The active-subspace function (k = 4, p = 0.4 uniform margin), d in 20, 63, 200: comparisons (nevergrad: evaluations)
and wall seconds until ||grad f|| <= EPSILON; NCRS (alpha 0.05) against dueling NGD (eta 0.1, the default profile's
calibrated picks), CMA-ES on comparison ranks (`cma`, sigma0 0.1) and nevergrad's OnePlusOne on exact values.
Budget 20000. What is measured and the ratios: benchmarks/comparison_oracles.py.
Run: `python -m benchmarks.ncrs_active_subspace` (JSON -> benchmarks/results/).
"""
from __future__ import annotations

import numpy as np

from flows.ncrs.experiments import make_instances
from tasks.comparison.objectives import ActiveSubspace
from tasks.comparison.oracles import ComparisonOracle, Noise, ValueOracle
from tasks.comparison.random_search import dueling_ngd, ncrs
from tasks.comparison.ranking import cma_es_ranked, one_plus_one

from .common import write_result
from .comparison_oracles import SEEDS, FirstHit, measured, size_row

AMBIENT_DIMS, EPSILON, K, P = (20, 63, 200), 0.1, 4, 0.4


def ambient_row(d: int) -> dict:
    inst = make_instances(d, K, list(range(SEEDS)), 0, 3.0)
    methods = {"ncrs": [], "dueling_ngd": [], "cma_es": [], "one_plus_one": []}
    for i in range(SEEDS):
        objective = ActiveSubspace(inst.A[i])
        reached = lambda x: float(objective.grad_norm(np.reshape(x, -1))) <= EPSILON
        noisy = lambda: ComparisonOracle(objective, Noise("margin", p=P), np.random.default_rng(i))

        def search(budget):
            hit = FirstHit(reached)
            ncrs(noisy(), inst.x0[i : i + 1], 0.05, budget or 20000, np.random.default_rng(10 + i), record=hit)
            return hit.queries, hit.seconds

        def ngd(budget):
            hit = FirstHit(reached)
            dueling_ngd(noisy(), inst.x0[i : i + 1], 0.1, 1e-3, budget or 20000, np.random.default_rng(10 + i), record=hit)
            return hit.queries, hit.seconds

        def cma(budget):
            hit = FirstHit(reached)
            cma_es_ranked(noisy(), inst.x0[i], 0.1, budget or 20000, 10 + i, record=hit)
            return hit.queries, hit.seconds

        def opo(budget):
            hit = FirstHit(reached)
            one_plus_one(ValueOracle(objective), inst.x0[i], budget or 20000, 10 + i, record=hit)
            return hit.queries, hit.seconds

        for name, run in (("ncrs", search), ("dueling_ngd", ngd), ("cma_es", cma), ("one_plus_one", opo)):
            methods[name].append(measured(run, i == 0))
    return size_row("d", d, methods, "ncrs")


def main() -> None:
    rows = [ambient_row(d) for d in AMBIENT_DIMS]
    for row in rows:
        print(f"active subspace d={row['d']}: " + ", ".join(
            f"{m} {v['queries']} q {v['seconds']:.3f} s" if v["seconds"] is not None else f"{m} not reached"
            for m, v in row["methods"].items()))
    write_result("ncrs_active_subspace", {"rows": rows, "epsilon": EPSILON, "k": K, "margin": P})


if __name__ == "__main__":
    main()
