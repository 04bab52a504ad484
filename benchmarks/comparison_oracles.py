"""Comparison-only optimizers: queries and wall time to a target accuracy, per method, against the dimension, with
the peak traced memory, in one run (riemannian_dueling and ncrs, issue 19).

- dueling: E1 Rayleigh on S^{n-1}, n in 10, 20, 40 (SEEDS instances): comparisons (RZO: function evaluations,
  and their comparison equivalent at 2 per comparison) and wall seconds until the relative gap first reaches
  GAP_TARGET; RDNGD against Euclidean dueling NGD and RZO. Budget 80 n comparisons.
- ncrs: the active-subspace function (k = 4, p = 0.4 uniform margin), d in 20, 63, 200: comparisons
  (nevergrad: evaluations) and wall seconds until ||grad f|| <= EPSILON; NCRS (alpha 0.05) against dueling NGD
  (eta 0.1, the default profile's calibrated picks), CMA-ES on comparison ranks (`cma`, sigma0 0.1) and nevergrad's
  OnePlusOne on exact values. Budget 20000.
Peak memory: tracemalloc's peak over a separate run of MEMORY_QUERIES queries per method and size (tracing slows
Python loops several-fold, so the timed runs are untraced).
Ratios: the method's median queries, wall time and peak memory over each baseline's, per size. Not reached counts as infinite
(the ratio is then null). Run: `python -m benchmarks.comparison_oracles` (JSON -> benchmarks/results/).
"""
from __future__ import annotations

import time
import tracemalloc

import numpy as np

from flows.ncrs.experiments import HitRecorder, make_instances
from tasks.comparison.dueling import SqrtDecay, rdngd
from tasks.comparison.geometry import SphereGeometry
from tasks.comparison.objectives import ActiveSubspace, Rayleigh, rayleigh_matrix
from tasks.comparison.oracles import ComparisonOracle, Noise, ValueOracle
from tasks.comparison.random_search import dueling_ngd, ncrs
from tasks.comparison.ranking import cma_es_ranked, one_plus_one
from tasks.comparison.zeroth_order import rzo

from .common import write_result

SPHERE_DIMS, AMBIENT_DIMS = (10, 20, 40), (20, 63, 200)
SEEDS, GAP_TARGET, EPSILON, K, P = 3, 0.05, 0.1, 4, 0.4


class _FirstHit:
    """Stops a run when `reached(x)` first holds; keeps the queries and the wall time at that point."""

    def __init__(self, reached):
        self.reached, self.start, self.queries, self.seconds = reached, time.perf_counter(), np.inf, np.inf

    def __call__(self, x, queries, info) -> bool:
        if self.reached(x):
            self.queries, self.seconds = queries, time.perf_counter() - self.start
            return True
        return False


MEMORY_QUERIES = 200


def _measured(run, first: bool) -> tuple[float, float, float]:
    """(queries, seconds, peak MiB) of run(budget): the timed run to the target, then (first seed only) a traced one
    of MEMORY_QUERIES queries for the peak memory."""
    queries, seconds = run(None)
    peak = np.nan
    if first:
        tracemalloc.start()
        run(MEMORY_QUERIES)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    return queries, seconds, peak


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
            hit = _FirstHit(reached)
            rdngd(geometry, ComparisonOracle(cost, rng=np.random.default_rng(1)), x0, budget or 80 * n,
                  SqrtDecay(0.3), 1e-4, np.random.default_rng(2), record=hit)
            return hit.queries, hit.seconds

        def ngd(budget):
            hit = _FirstHit(reached)
            dueling_ngd(ComparisonOracle(cost, rng=np.random.default_rng(1)), x0[None], SqrtDecay(0.3), 1e-4,
                        budget or 80 * n, np.random.default_rng(2), project=geometry.to_manifold, record=hit)
            return hit.queries, hit.seconds

        def zo(budget):
            hit = _FirstHit(reached)
            rzo(geometry, ValueOracle(cost), x0, 2 * (budget or 80 * n), 10 / (10 + n), 1e-4, 10,
                np.random.default_rng(2), record=hit)
            return hit.queries / 2, hit.seconds  # comparison equivalent: 2 evaluations per comparison

        for name, run in (("rdngd", rd), ("euclidean_ngd", ngd), ("rzo", zo)):
            methods[name].append(_measured(run, seed == 0))
    return _row("n", n, methods, "rdngd")


def ambient_row(d: int) -> dict:
    inst = make_instances(d, K, list(range(SEEDS)), 0, 3.0)
    methods = {"ncrs": [], "dueling_ngd": [], "cma_es": [], "one_plus_one": []}
    for i in range(SEEDS):
        objective = ActiveSubspace(inst.A[i])
        reached = lambda x: float(objective.grad_norm(np.reshape(x, -1))) <= EPSILON
        noisy = lambda: ComparisonOracle(objective, Noise("margin", p=P), np.random.default_rng(i))

        def search(budget):
            hit = _FirstHit(reached)
            ncrs(noisy(), inst.x0[i : i + 1], 0.05, budget or 20000, np.random.default_rng(10 + i), record=hit)
            return hit.queries, hit.seconds

        def ngd(budget):
            hit = _FirstHit(reached)
            dueling_ngd(noisy(), inst.x0[i : i + 1], 0.1, 1e-3, budget or 20000, np.random.default_rng(10 + i), record=hit)
            return hit.queries, hit.seconds

        def cma(budget):
            hit = _FirstHit(reached)
            cma_es_ranked(noisy(), inst.x0[i], 0.1, budget or 20000, 10 + i, record=hit)
            return hit.queries, hit.seconds

        def opo(budget):
            hit = _FirstHit(reached)
            one_plus_one(ValueOracle(objective), inst.x0[i], budget or 20000, 10 + i, record=hit)
            return hit.queries, hit.seconds

        for name, run in (("ncrs", search), ("dueling_ngd", ngd), ("cma_es", cma), ("one_plus_one", opo)):
            methods[name].append(_measured(run, i == 0))
    return _row("d", d, methods, "ncrs")


def _row(size_name: str, size: int, methods: dict[str, list], ours: str) -> dict:
    medians = {name: {"queries": float(np.median([r[0] for r in rows])), "seconds": float(np.median([r[1] for r in rows])),
                      "peak_mib": float(np.nanmax([r[2] for r in rows])),
                      "reached": int(np.isfinite([r[0] for r in rows]).sum())} for name, rows in methods.items()}
    ratio = lambda a, b: a / b if np.isfinite(a) and np.isfinite(b) and b > 0 else None
    ratios = {f"{ours}_over_{name}": {key: ratio(medians[ours][key], medians[name][key])
                                      for key in ("queries", "seconds", "peak_mib")}
              for name in methods if name != ours}
    clean = {name: {k: (v if np.isfinite(v) else None) for k, v in row.items()} for name, row in medians.items()}
    return {size_name: size, "seeds": SEEDS, "methods": clean, "ratios": ratios}


def main() -> None:
    dueling = [sphere_row(n) for n in SPHERE_DIMS]
    for row in dueling:
        print(f"sphere n={row['n']}: " + ", ".join(f"{m} {v['queries']} q {v['seconds']:.3f} s" if v["seconds"] is not None
                                                    else f"{m} not reached" for m, v in row["methods"].items()))
    search = [ambient_row(d) for d in AMBIENT_DIMS]
    for row in search:
        print(f"active subspace d={row['d']}: " + ", ".join(
            f"{m} {v['queries']} q {v['seconds']:.3f} s" if v["seconds"] is not None else f"{m} not reached"
            for m, v in row["methods"].items()))
    write_result("comparison_oracles", {"dueling_sphere": dueling, "ncrs_active_subspace": search,
                                        "gap_target": GAP_TARGET, "epsilon": EPSILON, "k": K, "margin": P})


if __name__ == "__main__":
    main()
