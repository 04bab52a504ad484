"""One-shot speed of `papers se3-sync solve`: DQGPM against EIG when a process solves one graph and exits.

Each run is a fresh Python process that reads a g2o graph as the CLI does (untimed: the reader is the same for every
method) and then times what the method costs it: importing the solvers, loading their compiled code (numba's JIT
start and kernel cache, or the ahead-of-time extension of tasks/sync/aot.py, or ARPACK) and solving. The whole
process's wall time is recorded beside it.

Graphs: geometric ER, mean degree 20 (the C2 setting's noise, sigma 0.1), n in SIZES. Variants: dqgpm (the compiled
engine as installed: ahead of time when built, else the JIT; the build is recorded), dqgpm_jit (numba's JIT kernels,
cached on disk), eig (ARPACK's stock tolerance, what the CLI runs) and eig_matched (tol 1e-6). REPEATS rounds, the
variants alternated in a rotating order within each. Per n: median times, and for each DQ variant the per-round
ratio over the stronger EIG of that round, its median and order-statistic interval, read against DQ <= EIG (target
from n = 400 on, issue 42) with the shared rule (tasks/core/claims.py: on_timings).

Run: `python -m benchmarks.se3_sync_oneshot` (JSON -> benchmarks/results/se3_sync_oneshot.json; about 5 minutes).
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SIZES = (100, 400, 2500)
TARGET_FROM_N = 400
MEAN_DEGREE, SIGMA, SEED = 20, 0.1, 1
REPEATS = 9
VARIANTS = {
    "dqgpm": ("dqgpm", {}),
    "dqgpm_jit": ("dqgpm", {"engine": "jit"}),
    "eig": ("eig", {}),
    "eig_matched": ("eig", {"tol": 1e-6}),
}
DQ, EIGS = ("dqgpm", "dqgpm_jit"), ("eig", "eig_matched")


def child(variant: str, path: str) -> None:
    """One one-shot run (in its own process): read the graph, then time importing, loading and solving."""
    from tasks.sync.g2o import read_g2o

    graph = read_g2o(path).graph
    start = time.perf_counter()
    from tasks.sync.methods import METHODS

    method, options = VARIANTS[variant]
    result = METHODS[method](graph, **options)
    one_shot = time.perf_counter() - start
    print(json.dumps({"one_shot_s": one_shot, "solve_s": result.wall_time, "converged": result.converged,
                      "kernels": result.info.get("kernels", "arpack")}))


def write_graph(folder: Path, n: int) -> Path:
    from tasks.sync.g2o import invert_poses, write_g2o
    from tasks.sync.generators import geometric

    graph, truth = geometric(n, min(1.0, MEAN_DEGREE / (n - 1)), SIGMA, SIGMA, SEED)
    path = folder / f"er{MEAN_DEGREE}_n{n}.g2o"
    write_g2o(path, list(range(n)), invert_poses(truth), graph.edges, graph.Z)
    return path


def run_fresh(variant: str, path: Path) -> dict:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "benchmarks.se3_sync_oneshot", variant, str(path)],
                          cwd=Path(__file__).resolve().parents[1], check=True, capture_output=True, text=True)
    return {**json.loads(done.stdout.strip().splitlines()[-1]), "process_s": time.perf_counter() - start}


def rounds(path: Path) -> dict[str, list[dict]]:
    """REPEATS rounds of every variant, each round in a rotated order (no variant always runs first)."""
    labels = list(VARIANTS)
    runs: dict[str, list[dict]] = {label: [] for label in labels}
    for r in range(REPEATS):
        for label in labels[r % len(labels):] + labels[:r % len(labels)]:
            runs[label].append(run_fresh(label, path))
    return runs


def summarize(n: int, runs: dict[str, list[dict]]) -> dict:
    from tasks.core.claims import Gate, median_interval, on_timings

    one_shot = {label: [run["one_shot_s"] for run in mine] for label, mine in runs.items()}
    stronger = np.minimum(*(np.array(one_shot[e]) for e in EIGS))  # the faster EIG of each round
    row = {"n": n, "median_one_shot_s": {label: float(np.median(t)) for label, t in one_shot.items()},
           "median_solve_s": {label: float(np.median([r["solve_s"] for r in mine])) for label, mine in runs.items()},
           "median_process_s": {label: float(np.median([r["process_s"] for r in mine])) for label, mine in runs.items()},
           "kernels": {label: sorted({r["kernels"] for r in mine}) for label, mine in runs.items()},
           "runs": runs}
    for label in DQ:
        ratios = (np.array(one_shot[label]) / stronger).tolist()
        interval = median_interval(ratios, "alternated fresh-process rounds")
        row[f"ratio_{label}_over_stronger_eig"] = {"median": float(np.median(ratios)), "low": interval.low,
                                                   "high": interval.high, "per_round": ratios}
        row[f"ratio_{label}_over_eig_stock"] = float(np.median(np.array(one_shot[label]) / np.array(one_shot["eig"])))
        if n >= TARGET_FROM_N:
            row[f"target_{label}"] = on_timings(ratios, Gate(high=1.0), "alternated fresh-process rounds").word
    return row


def print_row(row: dict) -> None:
    m = row["median_one_shot_s"]
    print(f"n={row['n']:5d} one-shot (ms): " + ", ".join(f"{label} {t * 1e3:.0f}" for label, t in m.items())
          + " | DQ / stronger EIG: " + ", ".join(
              f"{label} {row[f'ratio_{label}_over_stronger_eig']['median']:.2f} "
              f"[{row[f'ratio_{label}_over_stronger_eig']['low']:.2f}, {row[f'ratio_{label}_over_stronger_eig']['high']:.2f}]"
              f"{' ' + row[f'target_{label}'] if f'target_{label}' in row else ''}" for label in DQ), flush=True)


def main() -> dict:
    import os

    from .common import write_result

    start, load_before = time.perf_counter(), os.getloadavg()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for n in SIZES:
            rows.append(summarize(n, rounds(write_graph(Path(folder), n))))
            print_row(rows[-1])
    result = {"mean_degree": MEAN_DEGREE, "sigma": SIGMA, "repeats": REPEATS, "target_from_n": TARGET_FROM_N,
              "blas_threads": "default", "rows": rows,
              "ratio_table": {label: {str(r["n"]): round(r[f"ratio_{label}_over_stronger_eig"]["median"], 3)
                                      for r in rows} for label in DQ},
              "load_average": {"before": load_before, "after": os.getloadavg()},
              "seconds": time.perf_counter() - start}
    print(f"-> {write_result('se3_sync_oneshot', result)} ({result['seconds']:.0f} s)")
    return result


if __name__ == "__main__":
    if len(sys.argv) == 3:
        child(*sys.argv[1:])
    else:
        main()
