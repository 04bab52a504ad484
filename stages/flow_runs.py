"""Prefect flow runs of stages that ended without telling the server: marked Crashed, not Running for good.

A stage's flow runs carry two tags: `papers-stage` and `papers-pid:<host>:<pid>`. A stage that is
interrupted while the server is up crashes its own runs on the way out; one that lost the server
(or was SIGKILLed) cannot, so the next `server.start` that finds the server down reaps them:
any run still Running or Pending whose stage process on this host is gone.
"""
from __future__ import annotations

import os
import socket
import threading

import psutil

STAGE_TAG = "papers-stage"
CALL_TIMEOUT_S = 10.0


def pid_tag(pid: int | None = None) -> str:
    return f"papers-pid:{socket.gethostname()}:{pid or os.getpid()}"


def stage_tags() -> tuple[str, str]:
    return STAGE_TAG, pid_tag()


def _owner_gone(tags: list[str]) -> bool:
    prefix = f"papers-pid:{socket.gethostname()}:"
    pids = [int(tag.removeprefix(prefix)) for tag in tags if tag.startswith(prefix)]
    return bool(pids) and not any(psutil.pid_exists(pid) for pid in pids)


def crash_open_runs(reason: str, owner: str | None = None) -> int:
    """Set Running/Pending stage flow runs to Crashed: those of `owner` (a pid tag), else those whose
    process on this host is gone. Returns how many; gives up quietly after CALL_TIMEOUT_S."""
    crashed = []

    def call() -> None:
        from prefect.client.orchestration import get_client
        from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterState, FlowRunFilterStateType, FlowRunFilterTags
        from prefect.client.schemas.objects import StateType
        from prefect.states import Crashed

        open_states = FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.RUNNING, StateType.PENDING]))
        wanted = FlowRunFilterTags(all_=[STAGE_TAG, owner] if owner else [STAGE_TAG])
        with get_client(sync_client=True) as client:
            for run in client.read_flow_runs(flow_run_filter=FlowRunFilter(tags=wanted, state=open_states)):
                if owner or _owner_gone(run.tags):
                    client.set_flow_run_state(run.id, Crashed(message=reason), force=True)
                    crashed.append(run.id)

    def guarded() -> None:
        try:
            call()
        except Exception:  # bookkeeping on the way out: a server that cannot answer changes nothing
            pass

    worker = threading.Thread(target=guarded, name="crash-open-flow-runs", daemon=True)
    worker.start()
    worker.join(CALL_TIMEOUT_S)
    return len(crashed)
