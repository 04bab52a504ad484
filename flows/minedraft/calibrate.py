"""What the hardware allows and what a step costs (spec §6.3-6.4), measured inside the solve stage: CPU topology, the
parallel-efficiency probe (a fixed matmul workload on each pinned worker alone, then on both at once), and one
step's drafting, verification and pipe round trip in a run's own workers (right before and after it)."""
from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

import numpy as np

from .worker import Worker


def cpu_topology() -> dict:
    info = {"cpu_count": os.cpu_count(), "affinity": sorted(os.sched_getaffinity(0)), "load_average": os.getloadavg()}
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        fields = {}
        for line in cpuinfo.read_text().splitlines():
            key, _, value = line.partition(":")
            fields.setdefault(key.strip(), set()).add(value.strip())
        info |= {"model_name": sorted(fields.get("model name", [])), "physical_ids": sorted(fields.get("physical id", [])),
                 "core_ids": sorted(fields.get("core id", [])), "siblings": sorted(fields.get("siblings", [])),
                 "cpu_cores": sorted(fields.get("cpu cores", []))}
        # hyper-threads share a core: more siblings than cores per package
        info["hyperthreads"] = info["siblings"] != info["cpu_cores"]
    return info


def parallel_efficiency(workers: list[Worker], size: int, repeats: int) -> dict:
    """Seconds of the workload on each core alone, then on all at once; efficiency = alone / together (1: the cores
    do not slow each other, 0.5: two workers share one core's throughput)."""
    for w in workers:
        w.call("matmul", size=size, repeats=1)  # warm-up
    alone = [w.call("matmul", size=size, repeats=repeats) for w in workers]
    for w in workers:
        w.send("matmul", size=size, repeats=repeats)
    together = [w.receive() for w in workers]
    return {"alone_s": alone, "together_s": together,
            "efficiency": float(np.mean(alone) / np.mean(together)), "load_average": os.getloadavg()}


def round_trip(worker: Worker, payload, repeats: int) -> float:
    """Median seconds to send `payload` to a worker and get it back (the IPC part of PSD's overhead o')."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        worker.call("ping", payload=payload)
        times.append(time.perf_counter() - t0)
    return float(statistics.median(times))


def run_costs(main: Worker, drafter: Worker | None, contexts: list[list[int]], batch: int, k: int, temperature: float,
              repeats: int) -> dict:
    """One step's costs as a decode run meets them, in its own workers: `draft_s` (k c_d: k drafter forwards and the
    sampling), `verify_s` (c_v: the target forward and the sampler) and `round_trip_s` (o'). SD-1c (`drafter`
    None): both in `main` on B contexts, one after the other, no pipe on the step's path (o = 0). PSD-2c: on B/2
    contexts, drafting in `drafter` while `main` verifies (the run's concurrency), plus one echo of a verify-sized
    message to `main`."""
    args = dict(k=k, temperature=temperature, repeats=repeats)
    if drafter is None:
        mine = contexts[:batch]
        return {"draft_s": main.call("draft_cost", contexts=mine, **args),
                "verify_s": main.call("verify_cost", contexts=mine, **args), "round_trip_s": 0.0}
    half = contexts[:batch // 2]
    drafter.send("draft_cost", contexts=half, **args)
    main.send("verify_cost", contexts=half, **args)
    costs = {"draft_s": drafter.receive(), "verify_s": main.receive()}
    from tasks.lm.corpus import CHAR_VOCAB

    message = (half, [c[-k:] for c in half], np.zeros((len(half), k, CHAR_VOCAB.size)))
    return costs | {"round_trip_s": round_trip(main, message, repeats)}
