"""DQ pipeline (DQGPM, with its power-method start) vs EIG wall time on sparse graphs.

n in {100, 200, 400, 800}, mean degree 20, sigma 0.1; both methods timed in this one run on
the same graphs, BLAS on one thread and at the library default; medians of repeats.
"""
from __future__ import annotations

import numpy as np
from threadpoolctl import threadpool_limits

from tasks.sync.generators import geometric
from tasks.sync.methods import METHODS

from .common import write_result

SIZES = (100, 200, 400, 800)
MEAN_DEGREE, SIGMA, SEEDS, REPEATS = 20, 0.1, 3, 5
METHODS_TIMED = ("dqgpm", "dq_spectral", "eig")


def main() -> dict:
    rows = []
    for n in SIZES:
        graphs = [geometric(n, MEAN_DEGREE / (n - 1), SIGMA, SIGMA, seed)[0] for seed in range(SEEDS)]
        for threads in (1, None):
            with threadpool_limits(limits=threads):
                medians = {m: float(np.median([METHODS[m](g).wall_time for g in graphs for _ in range(REPEATS)]))
                           for m in METHODS_TIMED}
            rows.append({"n": n, "edges": int(np.mean([len(g.edges) for g in graphs])),
                         "blas_threads": threads or "default", "median_s": medians,
                         "ratio_dqgpm_over_eig": medians["dqgpm"] / medians["eig"],
                         "ratio_dq_spectral_over_eig": medians["dq_spectral"] / medians["eig"]})
            print(f"n={n:4d} threads={threads or 'default':>7}: dqgpm {medians['dqgpm'] * 1e3:7.2f} ms, "
                  f"eig {medians['eig'] * 1e3:7.2f} ms, ratio {rows[-1]['ratio_dqgpm_over_eig']:.2f}", flush=True)
    result = {"mean_degree": MEAN_DEGREE, "sigma": SIGMA, "seeds": SEEDS, "repeats": REPEATS, "rows": rows}
    print(f"-> {write_result('se3_sync_speed', result)}")
    return result


if __name__ == "__main__":
    main()
