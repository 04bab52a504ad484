"""RDNGD on the sphere: comparisons and wall time to a target accuracy against the dimension, with the peak traced
memory, in one run (issue 19).

E1 Rayleigh on S^{n-1}, n in 10, 20, 40 (SEEDS instances): comparisons (RZO: function evaluations, and their
comparison equivalent at 2 per comparison) and wall seconds until the relative gap first reaches GAP_TARGET; RDNGD
against Euclidean dueling NGD and RZO. Budget 80 n comparisons. What is measured and the ratios:
benchmarks/comparison_oracles.py. Run: `python -m benchmarks.riemannian_dueling_sphere` (JSON -> benchmarks/results/).
"""
from __future__ import annotations

import numpy as np

from tasks.comparison.dueling import SqrtDecay, rdngd
from tasks.comparison.geometry import SphereGeometry
from tasks.comparison.objectives import Rayleigh, rayleigh_matrix
from tasks.comparison.oracles import ComparisonOracle, ValueOracle
from tasks.comparison.random_search import dueling_ngd
from tasks.comparison.zeroth_order import rzo

from .common import write_result
from .comparison_oracles import SEEDS, FirstHit, measured, size_row

SPHERE_DIMS, GAP_TARGET = (10, 20, 40), 0.05


def sphere_row(n: int) -> dict:
    geometry, methods = SphereGeometry(n), {"rdngd": [], "euclidean_ngd": [], "rzo": []}
    for seed in range(SEEDS):
        rng = np.random.default_rng(seed)
        A = rayleigh_matrix(n, rng)
        x0 = rng.standard_normal(n)
        x0 /= np.linalg.norm(x0)
        cost = Rayleigh(A)
        reached = lambda x: (cost(np.reshape(x, -1)) - cost.minimum) <= GAP_TARGET * (cost(x0) - cost.minimum)

        def rd(budget):
            hit = FirstHit(reached)
            rdngd(geometry, ComparisonOracle(cost, rng=np.random.default_rng(1)), x0, budget or 80 * n,
                  SqrtDecay(0.3), 1e-4, np.random.default_rng(2), record=hit)
            return hit.queries, hit.seconds

        def ngd(budget):
            hit = FirstHit(reached)
            dueling_ngd(ComparisonOracle(cost, rng=np.random.default_rng(1)), x0[None], SqrtDecay(0.3), 1e-4,
                        budget or 80 * n, np.random.default_rng(2), project=geometry.to_manifold, record=hit)
            return hit.queries, hit.seconds

        def zo(budget):
            hit = FirstHit(reached)
            rzo(geometry, ValueOracle(cost), x0, 2 * (budget or 80 * n), 10 / (10 + n), 1e-4, 10,
                np.random.default_rng(2), record=hit)
            return hit.queries / 2, hit.seconds  # comparison equivalent: 2 evaluations per comparison

        for name, run in (("rdngd", rd), ("euclidean_ngd", ngd), ("rzo", zo)):
            methods[name].append(measured(run, seed == 0))
    return size_row("n", n, methods, "rdngd")


def main() -> None:
    rows = [sphere_row(n) for n in SPHERE_DIMS]
    for row in rows:
        print(f"sphere n={row['n']}: " + ", ".join(f"{m} {v['queries']} q {v['seconds']:.3f} s" if v["seconds"] is not None
                                                    else f"{m} not reached" for m, v in row["methods"].items()))
    write_result("riemannian_dueling_sphere", {"rows": rows, "gap_target": GAP_TARGET})


if __name__ == "__main__":
    main()
