"""A bounded end for a stage that is interrupted or loses its Prefect server.

Prefect's client retries a vanished server for minutes, Ctrl-C lands in whichever thread or
pool worker is busy, and a stage killed half-way leaves pool workers and staged outputs
behind. The guard makes all of these end the same way, within a known time: the stage's
MLflow runs are closed FAILED with the reason, its child processes are terminated, its staged
outputs are deleted, and the process exits non-zero (so DVC records nothing). It exits with
`os._exit`, on purpose: a thread stuck in a retry loop must not be able to hold the exit up.
"""
from __future__ import annotations

import os
import shutil
import signal
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import psutil

from .flow_runs import crash_open_runs, pid_tag

# A refused connection means the server is gone; no answer at all may be a loaded machine.
REFUSED_FOR_S = 10.0
SILENT_FOR_S = 60.0
POLL_S = 1.0
CHILD_GRACE_S = 3.0
EXIT_CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}


def server_state(api_url: str, timeout: float = 2.0) -> str:
    """'up', 'refused' (nothing listens: the server is gone) or 'silent' (no answer in time)."""
    try:
        with urllib.request.urlopen(f"{api_url}/health", timeout=timeout) as response:
            return "up" if response.status == 200 else "silent"
    except urllib.error.URLError as error:
        return "refused" if isinstance(error.reason, ConnectionRefusedError) else "silent"
    except ConnectionRefusedError:
        return "refused"
    except OSError:
        return "silent"


def terminate_children(grace_s: float = CHILD_GRACE_S, keep: tuple[int, ...] = ()) -> None:
    """SIGTERM every descendant process (but `keep`), SIGKILL those still alive after `grace_s`."""
    children = [c for c in psutil.Process().children(recursive=True) if c.pid not in keep]
    for child in children:
        try:
            child.terminate()
        except psutil.Error:
            pass
    _, alive = psutil.wait_procs(children, timeout=grace_s)
    for child in alive:
        try:
            child.kill()
        except psutil.Error:
            pass


class StageGuard:
    """Install with `with StageGuard(label, close_run, tracker_pid) as guard:`; `guard.watch(api_url)` once the
    stage talks to Prefect, `guard.staged(folder)` for each temporary output folder.

    close_run(reason) closes the stage's MLflow runs FAILED; it is called once, from whichever
    thread ends the stage first.
    """

    def __init__(self, label: str, close_run, keep_pids: tuple[int, ...] = ()):
        self.label, self.close_run, self.keep_pids = label, close_run, keep_pids
        self.server_lost = False
        self.folders: list[Path] = []
        self._ending = threading.Lock()
        self._watching = threading.Event()
        self._previous = {}

    def __enter__(self) -> StageGuard:
        for signum in EXIT_CODES:
            self._previous[signum] = signal.signal(signum, self._on_signal)
        return self

    def __exit__(self, *exc) -> None:
        self._watching.clear()
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)

    def staged(self, folder: Path) -> None:
        self.folders.append(folder)

    def watch(self, api_url: str) -> None:
        """Abort the stage when the Prefect server at api_url refuses connections for REFUSED_FOR_S
        seconds, or does not answer for SILENT_FOR_S seconds."""
        self._watching.set()
        threading.Thread(target=self._watch, args=(api_url,), name="prefect-server-watch", daemon=True).start()

    def unwatch(self) -> None:
        """The flow is over: a server that goes away now costs the stage nothing."""
        self._watching.clear()

    def _watch(self, api_url: str) -> None:
        since = {"refused": None, "silent": None}
        while self._watching.is_set():
            state = server_state(api_url)
            now = time.monotonic()
            for kind in since:
                since[kind] = (since[kind] or now) if state == kind else None
            self.server_lost = any(start is not None for start in since.values())
            if since["refused"] is not None and now - since["refused"] >= REFUSED_FOR_S:
                self.abort(f"the Prefect server at {api_url} went away (connection refused for {REFUSED_FOR_S:g} s)", 1)
            if since["silent"] is not None and now - since["silent"] >= SILENT_FOR_S:
                self.abort(f"the Prefect server at {api_url} stopped answering for {SILENT_FOR_S:g} s", 1)
            time.sleep(POLL_S)

    def _on_signal(self, signum, frame) -> None:
        self.abort(f"interrupted by {signal.Signals(signum).name}", EXIT_CODES[signum])

    def abort(self, reason: str, code: int) -> None:
        """End the stage now: FAILED runs, no children, no staged outputs, exit `code`."""
        if not self._ending.acquire(blocking=False):
            return  # another thread is already ending the stage
        for signum in EXIT_CODES:  # a second Ctrl-C must not cut the cleanup short
            try:
                signal.signal(signum, signal.SIG_IGN)
            except ValueError:  # not the main thread: the main thread's handler is already ours
                pass
        print(f"[{self.label}] FAILED: {reason}; stopping", file=sys.stderr, flush=True)
        try:
            terminate_children(keep=self.keep_pids)
            if not self.server_lost:  # tell Prefect, or its flow runs read Running for good
                crash_open_runs(reason, owner=pid_tag())
            for folder in self.folders:
                shutil.rmtree(folder, ignore_errors=True)
            self.close_run(reason)
            terminate_children()
        finally:
            sys.stderr.flush()
            sys.stdout.flush()
            os._exit(code)
