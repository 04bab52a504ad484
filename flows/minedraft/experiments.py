"""The benchmark configurations of spec §6.3 on the same models, prompts and seeds, timed around the decode loop only
(workers started, models loaded and a warm-up run done before):
- AR-1c: target only, one core.  SD-1c: draft then verify in one process on one core (SD with the drafter sharing
  the target's device).  PSD-2c: drafter worker on core 1, target worker on core 0 (MineDraft's extra device).
  SD-2c: sequential SD with 2 intra-op threads on both cores (the equal-resources control).
  The GPU variants (flows/minedraft/gpu.py) where the workers hold a GpuWorkers.
SD-1c and PSD-2c runs can be bracketed by a calibration (`run_bracketed`) in their own worker processes right before
and right after the decode: the timing model is fed by each run's own costs, not by a stage run at another load.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from .calibrate import run_costs
from .gpu import GpuWorkers
from .psd import decode_psd
from .worker import Worker

CONFIGS = ("AR-1c", "SD-1c", "PSD-2c", "SD-2c")
# PSD's two devices: the first and the last core this process may run on (0 and 1 on the 2-core CI machine)
CORE_TARGET, CORE_DRAFTER = min(os.sched_getaffinity(0)), max(os.sched_getaffinity(0))


@dataclass
class Workers:
    """Two workers started once (start-up and loading stay out of the timings): `main` holds both models on core 0
    (AR-1c, SD-1c, and PSD's target), `drafter` the drafter on core 1 (PSD's drafter). SD-2c re-pins `main` to both
    cores with 2 threads for its runs."""

    main: Worker
    drafter: Worker | None
    gpu: GpuWorkers | None = None

    @classmethod
    def start(cls, target: str, drafter: str | None, with_drafter: bool = True) -> "Workers":
        workers = cls(Worker([CORE_TARGET], 1, target, drafter),
                      Worker([CORE_DRAFTER], 1, drafter=drafter) if with_drafter else None)
        workers.info()
        return workers

    def close(self) -> None:
        for w in (self.main, self.drafter, self.gpu):
            if w is not None:
                w.close()

    def info(self) -> dict:
        return {"main": self.main.ready(), "drafter": self.drafter.ready() if self.drafter else None}


def run_config(workers: Workers, config: str, prompts: list[list[int]], *, max_new: int, k: int, temperature: float,
               batch: int, seed: int) -> dict:
    """One timed decode of every prompt; the 1-minute load average before and after beside it."""
    load_before = os.getloadavg()[0]
    kwargs = dict(max_new=max_new, k=k, temperature=temperature, batch=batch, seed=seed)
    if config in PSD_WORKERS:
        drafter, target = PSD_WORKERS[config](workers)
        result = decode_psd(drafter, target, prompts, **kwargs).as_dict()
    elif config == "SD-gpu":
        result = workers.gpu.main.call("decode", prompts=prompts, method="sd", **kwargs)
    elif config == "SD-2c":
        workers.main.call("pin", cores=[CORE_TARGET, CORE_DRAFTER], threads=2)
        try:
            result = workers.main.call("decode", prompts=prompts, method="sd", **kwargs)
        finally:
            workers.main.call("pin", cores=[CORE_TARGET], threads=1)
    else:
        result = workers.main.call("decode", prompts=prompts, method="ar" if config == "AR-1c" else "sd", **kwargs)
    tokens = sum(len(o) for o in result["outputs"])
    return result | {"config": config, "k": 0 if config == "AR-1c" else k, "temperature": temperature,
                     "tokens": tokens, "throughput": tokens / result["wall_s"],
                     "latency_s": result["wall_s"] / len(prompts), "load_before": load_before,
                     "load_after": os.getloadavg()[0]}


# the (drafter, target) handles of each PSD configuration
PSD_WORKERS = {"PSD-2c": lambda w: (w.drafter, w.main), "PSD-gpu+cpu": lambda w: (w.drafter, w.gpu.main),
               "PSD-2stream": lambda w: (w.gpu.draft_stream, w.gpu.verify_stream)}
BRACKETED = ("SD-1c", "PSD-2c")  # the two sides of the timing model


def run_bracketed(workers: Workers, config: str, prompts: list[list[int]], contexts: list[list[int]], *,
                  calibrate_repeats: int, **decode) -> dict:
    """run_config, and for SD-1c and PSD-2c the per-step costs calibrated in the run's own workers right before and
    right after it (`calibration`: before, after)."""
    if config not in BRACKETED:
        return run_config(workers, config, prompts, **decode)

    def calibrate() -> dict:
        return run_costs(workers.main, workers.drafter if config == "PSD-2c" else None, contexts, decode["batch"],
                         decode["k"], decode["temperature"], calibrate_repeats)
    before = calibrate()
    run = run_config(workers, config, prompts, **decode)
    return run | {"calibration": {"before": before, "after": calibrate()}}


def warm_up(workers: Workers, prompts: list[list[int]], k: int, temperature: float,
            configs: tuple[str, ...] = CONFIGS) -> None:
    for config in configs:
        run_config(workers, config, prompts[:2], max_new=2, k=k, temperature=temperature, batch=2, seed=0)
