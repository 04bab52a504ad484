"""The one local Prefect server: start once in the background, reuse from every stage.

Prefect's ephemeral server costs 10-40 s per process on these machines, so stages never use
it; they talk to this server at PREFECT_API_URL and start it when it is not up. It is private to its
owner: started with the checkout's API credential (stages/environment.py: prefect_auth), it answers every
request without it with 401 (its /health probe aside).
"""
from __future__ import annotations

import base64
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import psutil

from tasks.core.inputs import InputError, check_replaceable

from .environment import AUTH_FILE

START_TIMEOUT_S = 120


class ServerError(RuntimeError):
    """The local Prefect server could not be started; the message says what prefect printed."""


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


def authorized(url: str | None = None) -> bool:
    """Whether the server takes this process's credential (PREFECT_API_AUTH_STRING): False when it answers 401,
    as a server another checkout started with its own credential does."""
    request = urllib.request.Request(f"{url or api_url()}/admin/version", headers=auth_header())
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status == 200
    except urllib.error.HTTPError as error:
        return error.code != 401
    except OSError:
        return True  # not answering is is_up's business, not a refused credential


def auth_header() -> dict[str, str]:
    """HTTP basic authorization with the auth string, as Prefect's own client sends it."""
    auth = os.environ.get("PREFECT_API_AUTH_STRING")
    return basic_header(auth) if auth else {}


def basic_header(credential: str) -> dict[str, str]:
    """HTTP basic authorization carrying `credential` ("user:password", or a Prefect auth string, which is sent
    the same way)."""
    return {"Authorization": "Basic " + base64.b64encode(credential.encode()).decode()}


def _prefect(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    executable = Path(sys.executable).with_name("prefect")
    env = dict(os.environ)
    if env.get("PREFECT_API_AUTH_STRING"):  # the server takes exactly the credential its clients send
        env["PREFECT_SERVER_API_AUTH_STRING"] = env["PREFECT_API_AUTH_STRING"]
    return subprocess.run([str(executable), *args], capture_output=True, text=True, timeout=timeout, env=env)


def pid_file() -> Path:
    """PREFECT_HOME/server.pid, where `prefect server start --background` writes its pid: absent or a regular file,
    else (a folder, a device, a link) an InputError naming it, which neither `prefect server start` nor `stop` gets past."""
    path = Path(os.environ["PREFECT_HOME"]) / "server.pid"
    try:
        check_replaceable(path, "the Prefect server's pid file")
    except InputError as error:
        raise InputError(f"{error} (prefect writes the server's pid there: remove it and retry)") from None
    return path


def server_pid() -> int | None:
    """The pid in PREFECT_HOME/server.pid if that process is alive and a Prefect server; else None,
    and a stale file (a server killed without `stop`) is removed so `start` and `stop` work again."""
    path = pid_file()
    try:
        pid = int(path.read_text().strip())
        process = psutil.Process(pid)
        if any("prefect" in part for part in process.cmdline()) and process.status() != psutil.STATUS_ZOMBIE:
            return pid
    except (OSError, ValueError, psutil.Error):
        pass
    path.unlink(missing_ok=True)
    return None


def start() -> str:
    """Start the server unless it is up; return its API URL once it answers and takes our credential."""
    pid_file()  # `prefect server start` would trip on a folder there after its own checks
    if is_up():
        return checked_credential()
    # Ours still runs but answered slowly (a loaded machine): wait for it; a second `prefect server start` would
    # replace it under the stages that use it. server_pid() also clears a stale pid file, which would make
    # `prefect server start` refuse.
    if server_pid() is None:
        host, port = os.environ["PREFECT_SERVER_API_HOST"], os.environ["PREFECT_SERVER_API_PORT"]
        done = _prefect("server", "start", "--background", "--host", host, "--port", port)
        if done.returncode != 0 and not is_up():
            said = " | ".join(line.strip() for line in (done.stdout + done.stderr).splitlines() if line.strip())[-600:]
            raise ServerError(f"`prefect server start` failed (exit {done.returncode}): {said}")
    deadline = time.monotonic() + START_TIMEOUT_S
    while not is_up():
        if time.monotonic() > deadline:
            raise ServerError(f"the Prefect server at {api_url()} did not answer within {START_TIMEOUT_S} s "
                              f"(log: `prefect server start` in {os.environ['PREFECT_HOME']})")
        time.sleep(0.5)
    from .flow_runs import crash_open_runs

    crash_open_runs("its stage process ended while the Prefect server was down")
    return checked_credential()


def checked_credential() -> str:
    """The API URL, once the server there is shown to take this checkout's credential."""
    if not authorized():
        raise ServerError(f"the Prefect server at {api_url()} refuses this checkout's credential "
                          f"({Path(os.environ['PREFECT_HOME']) / AUTH_FILE}): another checkout, or a version of this "
                          "project without API auth, started it; stop it there (`papers server stop`) or give this "
                          "checkout its own port (PAPERS_PREFECT_PORT)")
    return api_url()


def stop() -> bool:
    """Stop the server this project started (PID file under PREFECT_HOME); True if one ran."""
    if server_pid() is None:
        return False
    _prefect("server", "stop", timeout=60)
    return True
