"""Task-runner choice is a setting, not a code change.

PAPERS_TASK_RUNNER = thread (numpy/scipy release the GIL, and tasks share memory), process
(CPU-bound work that holds the GIL, such as SCIP solves), or dask (prefect-dask; PAPERS_DASK_ADDRESS names a running
scheduler for sweeps over several machines, else a local cluster is started).
PAPERS_MAX_WORKERS caps threads/processes (default: the machine's cores).
"""
from __future__ import annotations

import os

RUNNERS = ("thread", "process", "dask")


def task_runner(default: str = "thread"):
    """The runner PAPERS_TASK_RUNNER names, else `default` (a flow's own best choice)."""
    kind = os.environ.get("PAPERS_TASK_RUNNER", default)
    workers = int(os.environ.get("PAPERS_MAX_WORKERS", os.cpu_count() or 1))
    if kind == "thread":
        from prefect.task_runners import ThreadPoolTaskRunner

        return ThreadPoolTaskRunner(max_workers=workers)
    if kind == "process":
        from prefect.task_runners import ProcessPoolTaskRunner

        return ProcessPoolTaskRunner(max_workers=workers)
    if kind == "dask":
        from prefect_dask import DaskTaskRunner

        address = os.environ.get("PAPERS_DASK_ADDRESS")
        if address:
            return DaskTaskRunner(address=address)
        return DaskTaskRunner(cluster_kwargs={"n_workers": workers, "threads_per_worker": 1, "processes": True})
    raise ValueError(f"PAPERS_TASK_RUNNER: must be one of {RUNNERS}, got {kind!r}")
