"""SCIP with the learned stopper vs SCIP default vs the oracle, and the event handler's cost.

MIS instances of the default profile's family (n ~ U{85..95}, p = 0.1), solved here in one run:
plain SCIP (no event handler), SCIP with the sampling handler (the default baseline and the
oracle: time of the first 0.1%-optimal incumbent), and SCIP with the trained stopper of the
default profile (data/mip_early_stop/stoppers/mis.pt) inside the handler.
"""
from __future__ import annotations

import tempfile
from pathlib import Path
from time import perf_counter

import numpy as np

from tasks.core.device import single_torch_thread
from tasks.mip import generators, solver
from tasks.mip.conformal import time_to_eps
from tasks.mip.stopper import NetworkStopper

from .common import ROOT, write_result

INSTANCES, SIZE, EPS = 8, {"n_min": 85, "n_max": 95, "p": 0.1}, 1e-3
STOPPER = ROOT / "data" / "mip_early_stop" / "stoppers" / "mis.pt"


def plain_solve_seconds(path: Path, seed: int) -> float:
    model = solver.configure(solver.read_model(path), seed_shift=seed)
    start = perf_counter()
    model.optimize()
    return perf_counter() - start


def main() -> dict:
    single_torch_thread()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for seed in range(INSTANCES):
            path = Path(folder) / f"mis_{seed}.mps"
            generators.generate("mis", SIZE, 10_000 + seed, path)
            plain = plain_solve_seconds(path, seed)
            full, _ = solver.solve(path, family="mis", bound=solver.BOUNDS["mis"], seed_shift=seed)
            row = {"instance": path.stem, "plain_s": plain, "default_s": full.solve_time,
                   "handler_overhead_s": full.overhead, "oracle_s": time_to_eps(full, EPS)}
            if STOPPER.exists():
                stopped, _ = solver.solve(path, family="mis", bound=solver.BOUNDS["mis"], seed_shift=seed,
                                          stopper=NetworkStopper.load(STOPPER))
                gap = (stopped.ub[-1] - full.final_ub) / (abs(full.final_ub) + 0.1)
                row |= {"method_s": stopped.solve_time, "method_stopped": stopped.info["stopped_at"] is not None,
                        "method_covered": bool(gap <= EPS)}
            rows.append(row)
            print(f"{path.stem}: plain {plain:.2f} s, default {full.solve_time:.2f} s, oracle {row['oracle_s']:.2f} s"
                  + (f", method {row['method_s']:.2f} s" if "method_s" in row else ""), flush=True)
    mean = {key: float(np.mean([r[key] for r in rows])) for key in rows[0] if key.endswith("_s")}
    result = {"instances": INSTANCES, "size": SIZE, "stopper": str(STOPPER) if STOPPER.exists() else None, "rows": rows,
              "mean_s": mean,
              "ratio_method_over_default": mean["method_s"] / mean["default_s"] if "method_s" in mean else None,
              "ratio_oracle_over_default": mean["oracle_s"] / mean["default_s"],
              "handler_overhead_fraction": mean["handler_overhead_s"] / mean["default_s"],
              "ratio_default_over_plain": mean["default_s"] / mean["plain_s"]}
    print(f"-> {write_result('mip_early_stop', result)}")
    return result


if __name__ == "__main__":
    main()
