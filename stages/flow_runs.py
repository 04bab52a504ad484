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


def client_for(api_url: str | None = None):
    """A Prefect client of the server at api_url (default: PREFECT_API_URL), named explicitly: Prefect's own
    default, in a process that loaded its settings before the project configured them, is a temporary server."""
    from prefect.client.orchestration import SyncPrefectClient

    return SyncPrefectClient(api_url or os.environ["PREFECT_API_URL"], auth_string=os.environ.get("PREFECT_API_AUTH_STRING"))


def open_runs(client, tags: list[str], states=None) -> list:
    """Flow runs carrying every tag of `tags`, in one of `states` (StateType values; None: any state)."""
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterState, FlowRunFilterStateType, FlowRunFilterTags

    state = FlowRunFilterState(type=FlowRunFilterStateType(any_=list(states))) if states else None
    return client.read_flow_runs(flow_run_filter=FlowRunFilter(tags=FlowRunFilterTags(all_=tags), state=state))


def crash_open_runs(reason: str, owner: str | None = None, api_url: str | None = None) -> int:
    """Set Running/Pending stage flow runs to Crashed: those of `owner` (a pid tag), else those whose
    process on this host is gone. Returns how many; gives up quietly after CALL_TIMEOUT_S."""
    crashed = []

    def call() -> None:
        from prefect.client.schemas.objects import StateType
        from prefect.states import Crashed

        with client_for(api_url) as client:
            for run in open_runs(client, [STAGE_TAG, owner] if owner else [STAGE_TAG], (StateType.RUNNING, StateType.PENDING)):
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
