"""Task-runner choice is a setting, not a code change.

PAPERS_TASK_RUNNER = thread (numpy/scipy release the GIL, and tasks share memory), process
(CPU-bound work that holds the GIL, such as SCIP solves), or dask (prefect-dask; PAPERS_DASK_ADDRESS names a running
scheduler for sweeps over several machines, else a local cluster is started).
PAPERS_MAX_WORKERS caps threads/processes (default: the machine's cores; 1..MAX_WORKERS).
"""
from __future__ import annotations

import os
import threading
import time

from tasks.core.inputs import env_int

RUNNERS = ("thread", "process", "dask")
MAX_WORKERS = 1024  # a Dask LocalCluster starts each of them as a process at once


def max_workers() -> int:
    """PAPERS_MAX_WORKERS, else the machine's cores; a value that is no count in 1..MAX_WORKERS is an InputError."""
    return env_int("PAPERS_MAX_WORKERS", os.cpu_count() or 1, low=1, high=MAX_WORKERS, note="threads or processes per flow")


def task_runner(default: str = "thread"):
    """The runner PAPERS_TASK_RUNNER names, else `default` (a flow's own best choice)."""
    kind = os.environ.get("PAPERS_TASK_RUNNER", default)
    workers = max_workers()
    if kind == "thread":
        from prefect.task_runners import ThreadPoolTaskRunner

        return ThreadPoolTaskRunner(max_workers=workers)
    if kind == "process":
        from prefect.task_runners import ProcessPoolTaskRunner

        return ProcessPoolTaskRunner(max_workers=workers, initializer=exit_with_parent)
    if kind == "dask":
        from prefect_dask import DaskTaskRunner

        address = os.environ.get("PAPERS_DASK_ADDRESS")
        if address:
            # A tls:// scheduler: the client reads its certificates from Dask's config (distributed.comm.tls.*).
            return DaskTaskRunner(address=address)
        return DaskTaskRunner(cluster_kwargs=local_cluster_kwargs(workers))
    raise ValueError(f"PAPERS_TASK_RUNNER: must be one of {RUNNERS}, got {kind!r}")


def local_cluster_kwargs(workers: int) -> dict:
    """A LocalCluster on loopback only (scheduler, workers and dashboard), speaking mutual TLS: any local account
    reaches loopback, and a Dask client runs any function it sends, so only holders of the cluster's key may talk.

    security=True: LocalCluster makes a Security.temporary() when it starts (a new in-memory key and certificate
    per cluster, so per flow run: Prefect starts each run on task_runner.duplicate()) and hands it to its workers;
    prefect-dask's Client(cluster) takes cluster.security. A plain True also keeps the runner comparable
    (DaskTaskRunner.__eq__ compares cluster_kwargs) and picklable without carrying a key around. The dashboard
    stays plain HTTP: other local accounts can watch its read-only pages, not submit work."""
    return {"n_workers": workers, "threads_per_worker": 1, "processes": True, "host": "127.0.0.1",
            "dashboard_address": "127.0.0.1:8787", "protocol": "tls", "security": True}


def exit_with_parent(poll_s: float = 1.0) -> None:
    """Pool-worker initializer: end this worker when the stage process that started it is gone.

    A stage killed with SIGKILL cannot stop its pool, and an idle worker would wait on its
    queue for good (orphans of ~350 MB each); a daemon thread notices the new parent instead.
    """
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_s)
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()
