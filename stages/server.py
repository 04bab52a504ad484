"""The one local Prefect server: start once in the background, reuse from every stage.

Prefect's ephemeral server costs 10-40 s per process on these machines, so stages never use
it; they talk to this server at PREFECT_API_URL and start it when it is not up.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

START_TIMEOUT_S = 120


def api_url() -> str:
    return os.environ["PREFECT_API_URL"]


def ui_url() -> str:
    return api_url().removesuffix("/api")


def is_up(url: str | None = None) -> bool:
    try:
        with urllib.request.urlopen(f"{url or api_url()}/health", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def _prefect(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    executable = Path(sys.executable).with_name("prefect")
    return subprocess.run([str(executable), *args], capture_output=True, text=True, timeout=timeout)


def start() -> str:
    """Start the server unless it is up; return its API URL once it answers."""
    if is_up():
        return api_url()
    host, port = os.environ["PREFECT_SERVER_API_HOST"], os.environ["PREFECT_SERVER_API_PORT"]
    done = _prefect("server", "start", "--background", "--host", host, "--port", port)
    if done.returncode != 0 and not is_up():
        raise RuntimeError(f"prefect server start failed:\n{done.stdout}\n{done.stderr}")
    deadline = time.monotonic() + START_TIMEOUT_S
    while not is_up():
        if time.monotonic() > deadline:
            raise TimeoutError(f"Prefect server at {api_url()} did not answer within {START_TIMEOUT_S} s")
        time.sleep(0.5)
    return api_url()


def stop() -> bool:
    """Stop the server this project started (PID file under PREFECT_HOME); True if one ran."""
    if not (Path(os.environ["PREFECT_HOME"]) / "server.pid").exists():
        return False
    _prefect("server", "stop", timeout=60)
    return True
