"""SCIP with the learned stopper vs SCIP default vs the oracle, and what the stopper costs.

Fresh MIS instances of the default profile's family (n ~ U{100..105}, p = 0.1), each solved
here three ways in one run: plain SCIP (no event handler), SCIP with the sampling handler (the
default baseline, and the oracle: the time of its first 0.1%-optimal incumbent), and SCIP with
the default profile's trained stopper (data/mip_early_stop/stoppers/mis.pt) inside the handler.
The stopper's inference time is the one it measured inside those stopped solves; a stop counts
as fired only where SCIP's own gap was still above its tolerance.
"""
from __future__ import annotations

import tempfile
from pathlib import Path
from time import perf_counter

import numpy as np

from tasks.core.device import single_torch_thread
from tasks.mip import generators, solver
from tasks.mip.conformal import scip_gap, time_to_eps
from tasks.mip.stopper import NetworkStopper
from tasks.mip.trajectory import Trajectory

from .common import ROOT, write_result

INSTANCES, SIZE, EPS, GAP = 8, {"n_min": 100, "n_max": 105, "p": 0.1}, 1e-3, 1e-4
STOPPER = ROOT / "data" / "mip_early_stop" / "stoppers" / "mis.pt"


def plain_solve_seconds(path: Path, seed: int) -> float:
    model = solver.configure(solver.read_model(path), seed_shift=seed)
    start = perf_counter()
    model.optimize()
    return perf_counter() - start


def stopped_solve(path: Path, seed: int, full: Trajectory) -> dict:
    stopper = NetworkStopper.load(STOPPER)
    stopped, _ = solver.solve(path, family="mis", bound=solver.BOUNDS["mis"], seed_shift=seed, gap=GAP, stopper=stopper)
    at = stopped.info["stopped_at"]
    gap = (stopped.ub[-1] - full.final_ub) / (abs(full.final_ub) + 0.1)
    return {"method_s": stopped.solve_time, "method_handler_overhead_s": stopped.overhead,
            "method_inference_s": stopper.inference_s, "method_inferences": stopper.inferences,
            "method_fired": at is not None and scip_gap(float(stopped.ub[at]), float(stopped.lb[at])) > GAP,
            "method_covered": bool(gap <= EPS)}


def main() -> dict:
    single_torch_thread()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for seed in range(INSTANCES):
            path = Path(folder) / f"mis_{seed}.mps"
            generators.generate("mis", SIZE, 10_000 + seed, path)
            plain = plain_solve_seconds(path, seed)
            full, _ = solver.solve(path, family="mis", bound=solver.BOUNDS["mis"], seed_shift=seed, gap=GAP)
            row = {"instance": path.stem, "plain_s": plain, "default_s": full.solve_time,
                   "handler_overhead_s": full.overhead, "oracle_s": time_to_eps(full, EPS)}
            if STOPPER.exists():
                row |= stopped_solve(path, seed, full)
            rows.append(row)
            print(f"{path.stem}: plain {plain:.2f} s, default {full.solve_time:.2f} s, oracle {row['oracle_s']:.2f} s"
                  + (f", method {row['method_s']:.2f} s (fired {row['method_fired']})" if "method_s" in row else ""),
                  flush=True)
    mean = {key: float(np.mean([r[key] for r in rows])) for key in rows[0] if key.endswith("_s")}
    result = {"instances": INSTANCES, "size": SIZE, "stopper": str(STOPPER) if STOPPER.exists() else None, "rows": rows,
              "mean_s": mean,
              "ratio_oracle_over_default": mean["oracle_s"] / mean["default_s"],
              "handler_overhead_fraction": mean["handler_overhead_s"] / mean["default_s"],
              "ratio_default_over_plain": mean["default_s"] / mean["plain_s"]}
    if STOPPER.exists():
        result |= {"ratio_method_over_default": mean["method_s"] / mean["default_s"],
                   "method_fired": int(sum(r["method_fired"] for r in rows)),
                   "method_coverage": float(np.mean([r["method_covered"] for r in rows])),
                   "inference_ms_per_row": 1e3 * sum(r["method_inference_s"] for r in rows)
                   / max(sum(r["method_inferences"] for r in rows), 1),
                   "method_overhead_fraction": mean["method_handler_overhead_s"] / mean["method_s"]}
    print(f"-> {write_result('mip_early_stop', result)}")
    return result


if __name__ == "__main__":
    main()
