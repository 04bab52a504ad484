"""The stage guard on its own: a signal or a vanished server ends the process within a bound, cleanly."""
from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil

from stages.guard import server_state

STAGE = r"""
import subprocess, sys, time
from pathlib import Path
import stages.guard as guard
guard.REFUSED_FOR_S, guard.POLL_S = 1.0, 0.2
out = Path(sys.argv[1])
(out / "staged").mkdir()
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
(out / "child").write_text(str(child.pid))
with guard.StageGuard("paper-stage", lambda reason: (out / "closed").write_text(reason)) as g:
    g.staged(out / "staged")
    if sys.argv[2] != "-":
        g.watch(sys.argv[2])
    (out / "ready").write_text("")
    time.sleep(60)
"""


def start(tmp_path: Path, api_url: str = "-") -> subprocess.Popen:
    stage = subprocess.Popen([sys.executable, "-c", STAGE, str(tmp_path), api_url], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not (tmp_path / "ready").exists():
        assert stage.poll() is None and time.monotonic() < deadline, stage.stderr.read()
        time.sleep(0.05)
    return stage


def assert_clean_end(tmp_path: Path, stage: subprocess.Popen, code: int, reason: str) -> None:
    assert stage.wait(timeout=30) == code
    assert reason in (tmp_path / "closed").read_text() and reason in stage.stderr.read()
    assert not (tmp_path / "staged").exists()
    child = int((tmp_path / "child").read_text())
    assert not psutil.pid_exists(child) or psutil.Process(child).status() == psutil.STATUS_ZOMBIE


def test_sigterm_closes_the_run_failed_stops_children_and_deletes_staged_outputs(tmp_path):
    stage = start(tmp_path)
    stage.send_signal(signal.SIGTERM)
    assert_clean_end(tmp_path, stage, 143, "interrupted by SIGTERM")


def test_a_refusing_server_ends_the_stage_after_the_grace_period(tmp_path):
    with socket.socket() as probe:  # a port nothing listens on: connections are refused
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert server_state(f"http://127.0.0.1:{port}/api") == "refused"
    stage = start(tmp_path, f"http://127.0.0.1:{port}/api")
    assert_clean_end(tmp_path, stage, 1, "went away (connection refused for 1 s)")
