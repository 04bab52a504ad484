"""MLflow bookkeeping of a stage, done by a companion process.

Importing MLflow and opening its SQLite store costs about 1.7 s on these machines, more than
the whole orchestration budget of a stage. The stage process therefore starts this companion
first and streams its tracking calls to it (one JSON line each, in order), so MLflow starts up
on the other core while the stage imports its own libraries and runs its flow. The companion
also guards the run: if the stage process dies without closing it, the run is marked FAILED.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from tasks.core.io import jsonable


class Tracker:
    """The stage side: fire-and-forget calls, and `close` that waits for the companion's verdict."""

    def __init__(self, root: Path):
        self.process = subprocess.Popen([sys.executable, "-m", "stages.tracker", str(root)], cwd=root,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=os.environ.copy())
        self._lock = threading.Lock()  # the stage's guard may close the run from another thread

    def _send(self, op: str, **fields) -> None:
        line = json.dumps({"op": op, **fields}, default=jsonable) + "\n"
        with self._lock:
            try:
                self.process.stdin.write(line)
                self.process.stdin.flush()
            except (BrokenPipeError, ValueError):  # the companion died or the run is closed; close() reports
                pass

    def open(self, paper: str, invocation: str, inputs_hash: str, tags: dict[str, str]) -> None:
        self._send("open", paper=paper, invocation=invocation, inputs_hash=inputs_hash, tags=tags)

    def params(self, params: dict) -> None:
        self._send("params", params=params)

    def tags(self, tags: dict[str, str]) -> None:
        self._send("tags", tags=tags)

    def metrics(self, metrics: dict[str, float]) -> None:
        self._send("metrics", metrics=metrics)

    def curve(self, name: str, values: list[float]) -> None:
        self._send("curve", name=name, values=values)

    def artifacts(self, paths: list[Path], folder: str) -> None:
        self._send("artifacts", paths=[str(p) for p in paths], folder=folder)

    def register(self, name: str, path: Path, metrics: dict[str, float] | None = None) -> None:
        self._send("register", name=name, path=str(path), metrics=metrics or {})

    def close(self, ok: bool, error: str | None = None, timeout: float | None = None) -> dict:
        """Finish the run FINISHED or FAILED; returns {'run_id', 'parent_id'}; raises if tracking failed
        (or took longer than `timeout` seconds)."""
        self._send("close", ok=ok, error=error)
        with self._lock:
            try:
                self.process.stdin.close()
            except BrokenPipeError:
                pass
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise RuntimeError(f"MLflow tracking did not close the run within {timeout:g} s") from None
        if self.process.returncode != 0:
            raise RuntimeError(f"MLflow tracking failed (exit {self.process.returncode}); see the messages above")
        return json.loads(self.process.stdout.read())


def serve(root: Path) -> int:
    """The companion side: apply each request to MLflow in order."""
    from tasks.core import tracking

    # Ctrl-C and a SIGTERM to the process group are the stage's to handle: it closes the run
    # FAILED through this companion, which ends when its input does (the stage's death included).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    client = tracking.client_for(root)
    run_id = parent = started = None
    for line in sys.stdin:
        request = json.loads(line)
        op = request["op"]
        if op == "open":
            experiment = tracking.experiment_id(client, request["paper"], root)
            parent = tracking.parent_run(client, experiment, request["invocation"], request["tags"])
            run_id, started = tracking.stage_run(client, experiment, parent, request["inputs_hash"], request["tags"])
        elif op == "params":
            tracking.log_params(client, run_id, request["params"])
        elif op == "tags":
            tracking.set_tags(client, run_id, request["tags"])
        elif op == "metrics":
            tracking.log_metrics(client, run_id, request["metrics"], started)
        elif op == "curve":
            tracking.log_curve(client, run_id, request["name"], request["values"], started)
        elif op == "artifacts":
            tracking.log_artifacts(client, run_id, [Path(p) for p in request["paths"]], folder=request["folder"])
        elif op == "register":
            tracking.register_model(client, run_id, request["name"], Path(request["path"]), request.get("metrics"))
        elif op == "close":
            if request["error"]:
                tracking.set_tags(client, run_id, {"error": request["error"][-5000:]})
            tracking.finish(client, run_id, ok=request["ok"])
            tracking.mark_parent(client, parent, ok=request["ok"])
            print(json.dumps({"run_id": run_id, "parent_id": parent}))
            return 0
    if run_id is not None:  # the stage process ended without closing its run
        tracking.set_tags(client, run_id, {"error": "the stage process ended without closing its run"})
        tracking.finish(client, run_id, ok=False)
        tracking.mark_parent(client, parent, ok=False)
    return 1


if __name__ == "__main__":
    from .environment import configure

    configure(Path(sys.argv[1]))
    sys.exit(serve(Path(sys.argv[1])))
