"""MLflow bookkeeping of a stage, done by a companion process.

Importing MLflow and opening its SQLite store costs about 1.7 s on these machines, more than
the whole orchestration budget of a stage. The stage process therefore starts this companion
first and streams its tracking calls to it (one message each, in order, on the companion's stdin), so
MLflow starts up on the other core while the stage imports its own libraries and runs its flow. The
companion also guards the run: if the stage process dies without closing it, the run is marked FAILED.

The companion answers on its stdout with one message `{"run_id", "parent_id"}` right after it opened
the run (the stage reads it before its outputs move into place, to write the id into claims.json) and one more
when it closed the run. A store it cannot write (read-only, locked by another process, its artifact folder
not writable) is found when it opens the run: it answers `{"error": one line}` instead and exits, and the stage
fails with that line before any output is in place (TrackingError). Messages are framed JSON (tasks/core/messages.py); the MLflow calls themselves
are tasks/core/tracking.py's.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import BinaryIO, Iterator

from tasks.core import messages
from tasks.core.io import jsonable, path_md5


class TrackingError(RuntimeError):
    """The store cannot record the stage's run; str(error) is the one line saying which store, why and the fix."""


class Tracker:
    """The stage side: fire-and-forget calls, `run_id` that waits for the opened run's id, and
    `close` that waits for the companion's verdict."""

    def __init__(self, root: Path):
        # Through a warm host when one serves: MLflow is then loaded already (stages/warm.py).
        self.process = subprocess.Popen([sys.executable, "-m", "stages.warm", "stages.tracking", str(root)], cwd=root,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=os.environ.copy())
        self._lock = threading.Lock()  # the stage's guard may close the run from another thread
        self._answers: list[dict] = []  # the companion's answers: on open, then on close
        self._answered = threading.Condition()
        self._ended = False  # the companion's stdout reached its end
        threading.Thread(target=self._read_answers, name="tracker-answers", daemon=True).start()

    def _read_answers(self) -> None:
        try:
            while (answer := messages.receive(self.process.stdout)) is not None:
                with self._answered:
                    self._answers.append(answer)
                    self._answered.notify_all()
        finally:  # a bad frame too (its MessageError is printed): the answers end here
            with self._answered:
                self._ended = True
                self._answered.notify_all()

    def _answer(self, count: int, timeout: float | None) -> dict | None:
        """The companion's `count`-th answer, None if it ended without giving it (or took longer than `timeout`)."""
        with self._answered:
            self._answered.wait_for(lambda: len(self._answers) >= count or self._ended, timeout)
            return self._answers[count - 1] if len(self._answers) >= count else None

    def _send(self, op: str, **fields) -> None:
        with self._lock:
            if self.process.stdin.closed:  # the run is closed (the stage's guard may have closed it from another thread)
                return
            try:
                messages.send(self.process.stdin, {"op": op, **fields}, default=jsonable)
            except BrokenPipeError:  # the companion died; close() reports
                pass

    def open(self, paper: str, invocation: str, inputs_hash: str, tags: dict[str, str]) -> None:
        self._send("open", paper=paper, invocation=invocation, inputs_hash=inputs_hash, tags=tags)

    def run_id(self, timeout: float | None = None) -> str:
        """The id of the run `open` opened; blocks until the companion has opened it. A TrackingError when the
        store could not record it."""
        answer = self._answer(1, timeout)
        if answer is None:
            raise RuntimeError("MLflow tracking did not open the run " + (
                "(it ended; see the messages above)" if self._ended else f"within {timeout:g} s"))
        if "error" in answer:
            raise TrackingError(answer["error"])
        return answer["run_id"]

    def check_opened(self) -> None:
        """Without waiting: a TrackingError if the companion has already said that the store cannot record the run."""
        answer = self._answer(1, timeout=0)
        if answer is not None and "error" in answer:
            raise TrackingError(answer["error"])

    def refused(self) -> bool:
        """Whether the companion answered that the store cannot record the run (so there is no run to close)."""
        answer = self._answer(1, timeout=0)
        return answer is not None and "error" in answer

    def inputs(self, datasets: dict[str, str]) -> None:
        """The stage's data deps, {path: md5 as dvc.lock records it}, as the run's input datasets."""
        self._send("inputs", datasets=datasets)

    def outputs(self, paths: dict[str, Path]) -> None:
        """The stage's written outputs, {path as dvc.yaml names it: where it lies}: the companion hashes
        them into the run's output datasets and reads a claims.json among them into the run's description."""
        self._send("outputs", paths={name: str(path) for name, path in paths.items()})

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

    def close(self, ok: bool, error: str | None = None, timeout: float | None = None) -> dict | None:
        """Finish the run FINISHED or FAILED; returns {'run_id', 'parent_id'}, None when the store could not open it
        (the companion has ended, having said so); raises if tracking failed (or took longer than `timeout` seconds)."""
        if self.refused():
            with self._lock:
                self.process.stdin.close()
            self.process.wait(timeout)
            return None
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
        answer = self._answer(2, ANSWER_AFTER_EXIT_S)
        if answer is None:
            raise RuntimeError("MLflow tracking ended without reporting the closed run")
        return answer


ANSWER_AFTER_EXIT_S = 10.0  # the companion has exited: its last answer is at most a pipe read away


def stage_order(root: Path, paper: str) -> list[str]:
    """The paper's stages in dvc.yaml order (none for a paper without a dvc.yaml, as in tests)."""
    from .spec import paper_stages

    try:
        return [spec.stage for spec in paper_stages(root, paper)]
    except KeyError:
        return []


def answer_stream() -> BinaryIO:
    """Where the answers go: this process's stdout, taken over. Stdout itself then leads to /dev/null, so a
    library's chatter there cannot break a frame (the stage never showed it)."""
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    to_devnull(sys.stdout.fileno())
    return answers


def to_devnull(fd: int) -> None:
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, fd)
    os.close(null)


def answer(answers: BinaryIO, **fields: str) -> None:
    """One answer to the stage ({run_id, parent_id}, or {error}); a stage that is gone (killed before it read it)
    costs nothing: the companion still closes its run."""
    try:
        messages.send(answers, fields)
    except BrokenPipeError:  # what is left in the buffer goes nowhere, so the flush at exit cannot raise either
        to_devnull(answers.fileno())


def stage_requests(stream: BinaryIO) -> Iterator[dict]:
    """The stage's requests until its end; a bad frame (a stage killed while writing one) ends them too."""
    try:
        while (request := messages.receive(stream)) is not None:
            yield request
    except messages.MessageError as error:
        print(f"MLflow tracking: the stage's requests end in {error}", file=sys.stderr, flush=True)


def check_artifacts_writable(root: Path, paper: str) -> None:
    """The embedded store's artifact folder for the paper can be written: the stage's outputs are logged there
    after they are in place, too late to fail. (A store MLFLOW_TRACKING_URI names keeps its own artifacts.)"""
    if os.environ.get("MLFLOW_TRACKING_URI"):
        return
    from tasks.core.tracking import artifact_root

    folder = artifact_root(root) / paper
    existing = next(path for path in (folder, *folder.parents) if path.exists())
    if not os.access(existing, os.W_OK | os.X_OK):
        raise PermissionError(f"its artifact folder {existing} is not writable")


def unwritable_store(root: Path, error: Exception) -> str:
    """The stage's one line for a store that cannot record its run: which store, why (the error's first line) and
    the fix."""
    from tasks.core.tracking import tracking_uri

    why = (str(error).strip().splitlines() or [type(error).__name__])[0][:300]
    return (f"the MLflow store {tracking_uri(root)} cannot record the stage's run ({why}); make it writable (the "
            "folder mlflow/, its mlflow.db and artifacts/), stop the process that holds it locked, or point "
            "MLFLOW_TRACKING_URI at a writable store, then rerun")


def serve(root: Path) -> int:
    """The companion side: apply each request to MLflow in order."""
    answers = answer_stream()  # before MLflow loads and may print
    from tasks.core import tracking

    # Ctrl-C and a SIGTERM to the process group are the stage's to handle: it closes the run
    # FAILED through this companion, which ends when its input does (the stage's death included).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:  # while the stage starts up; a failure is told when it asks to open its run
        tracking.check_store_writable(root)  # first: MLflow retries a store it cannot open for minutes
        client, unusable = tracking.client_for(root), None
    except Exception as error:  # noqa: BLE001
        client, unusable = None, error
    experiment = run_id = parent = started = None
    tags: dict[str, str] = {}
    claims: dict | None = None  # the claims.json the stage wrote, read for the run's description

    def close(ok: bool, error: str | None) -> None:
        if error:
            tracking.set_tags(client, run_id, {"error": error[-5000:]})
        tracking.set_tags(client, run_id, {tracking.NOTE: tracking.stage_description(tags, "finished" if ok else "FAILED",
                                                                                     claims, error)})
        tracking.finish(client, run_id, ok=ok)
        tracking.mark_parent(client, parent, ok=ok)
        tracking.describe_pipeline(client, experiment, parent, stage_order(root, tags["paper"]), claims)

    for request in stage_requests(sys.stdin.buffer):
        op = request["op"]
        if op == "open":
            tags = request["tags"]
            try:
                if unusable is not None:
                    raise unusable
                experiment = tracking.experiment_id(client, request["paper"], root)
                check_artifacts_writable(root, request["paper"])
                parent = tracking.parent_run(client, experiment, request["invocation"], tags)
                run_id, started = tracking.stage_run(client, experiment, parent, request["inputs_hash"], tags)
            except Exception as error:  # noqa: BLE001 - read-only, locked, not ours: the stage says it in one line
                answer(answers, error=unwritable_store(root, error))
                return 2
            answer(answers, run_id=run_id, parent_id=parent)
            tracking.set_tags(client, run_id, {tracking.NOTE: tracking.stage_description(tags, "running")})
        elif op == "inputs":
            tracking.log_datasets(client, run_id, request["datasets"], context="input")
        elif op == "outputs":
            paths = {name: Path(path) for name, path in request["paths"].items() if Path(path).exists()}
            tracking.log_datasets(client, run_id, {name: path_md5(path) for name, path in paths.items()}, context="output")
            claims = next((json.loads(path.read_text()) for path in paths.values() if path.name == "claims.json"), None)
        elif op == "params":
            tracking.log_params(client, run_id, request["params"])
        elif op == "tags":
            tags = {**tags, **request["tags"]}
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
            close(request["ok"], request["error"])
            answer(answers, run_id=run_id, parent_id=parent)
            return 0
    if run_id is not None:  # the stage process ended without closing its run
        close(False, "the stage process ended without closing its run")
    return 1


if __name__ == "__main__":
    from .environment import configure

    configure(Path(sys.argv[1]))
    sys.exit(serve(Path(sys.argv[1])))
