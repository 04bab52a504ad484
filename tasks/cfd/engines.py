"""Which engine runs the wind tunnel: run_lbm checks the setup and the bodies, then runs them on
the torch solver (lbm.py), the fused numba CPU solver (fused.py) or the fused CUDA solver
(fused_cuda.py); run_lbm_batches spreads batches of bodies over worker processes.
"""
from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

import numpy as np

from tasks.core.device import resolve_device, single_torch_thread

from .lbm import run_torch
from .lbm_setup import Body, LBMResult, LBMSetup, check_bodies, validate_setup


def engine_of(setup: LBMSetup) -> str:
    """"numba" (the fused CPU solver), "torch" (the reference, and the GPU path of "auto": the cuda
    engine has not run on hardware yet) or "cuda" (asked for) for `setup`."""
    if setup.engine != "auto":
        return setup.engine
    return "numba" if resolve_device(setup.device) == "cpu" else "torch"


def run_lbm(setup: LBMSetup, bodies: Sequence[Body]) -> LBMResult:
    """Run the wind tunnel for all bodies at once in one process (one batch), on the setup's engine."""
    validate_setup(setup)
    check_bodies(bodies)
    if engine_of(setup) == "numba":
        from .fused import run_fused  # numba's import and kernel load only where the fused solver runs

        return run_fused(setup, bodies)
    if engine_of(setup) == "cuda":
        from .fused_cuda import run_cuda

        return run_cuda(setup, bodies)
    return run_torch(setup, bodies)


def _concatenate(results: Sequence[LBMResult]) -> LBMResult:
    stack = lambda name, axis=0: np.concatenate([getattr(r, name) for r in results], axis=axis)
    first = results[0]
    wall_time = sum(r.wall_time_s for r in results)
    updates = sum(r.mlups * r.wall_time_s for r in results)
    return LBMResult(cd=stack("cd"), cl=stack("cl"), cs=None if first.cs is None else stack("cs"),
                     coefficient_trace=stack("coefficient_trace", 1), drag_profile=stack("drag_profile"),
                     rho_mean=stack("rho_mean"), u_mean=stack("u_mean"), solid=stack("solid"),
                     wall_rows=first.wall_rows, diverged=stack("diverged"), mlups=updates / wall_time,
                     wall_time_s=wall_time, setup=first.setup)


def run_lbm_batches(setup: LBMSetup, bodies: Sequence[Body], batch_size: int, workers: int = 1) -> LBMResult:
    """Split bodies into batches of `batch_size` and run them on `workers` processes (one torch
    thread each); results are concatenated in the order of `bodies`. mlups and wall_time_s are
    summed over batches (per-process throughput, not the wall clock of the pool)."""
    if batch_size < 1 or workers < 1:
        raise ValueError(f"batch_size/workers: must be >= 1, got {batch_size!r}/{workers!r}")
    batches = [list(bodies[i:i + batch_size]) for i in range(0, len(bodies), batch_size)]
    if workers == 1:
        return _concatenate([run_lbm(setup, batch) for batch in batches])
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn"), initializer=single_torch_thread) as pool:
        return _concatenate(list(pool.map(run_lbm, [setup] * len(batches), batches)))
