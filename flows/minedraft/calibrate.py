"""What the hardware allows and what each stage costs (spec §6.3-6.4): CPU topology, the parallel-efficiency probe
(a fixed matmul workload on one core alone vs on both cores at once, one pinned process each), and the per-stage
costs c_d(b), c_v(b, k), the accept overhead and the pipe round trip, measured in pinned single-thread workers."""
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


def stage_costs(worker: Worker, contexts: list[list[int]], batches: list[int], ks: list[int], repeats: int) -> dict:
    """{b: {k: {c_d, c_v, accept}}} on the first b contexts."""
    return {b: {k: worker.call("stage_times", contexts=contexts[:b], k=k, repeats=repeats) for k in ks} for b in batches}
