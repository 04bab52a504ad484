"""Process environment for every entry point (stages, CLI, tests, deployments).

Set before prefect or mlflow is imported: both read their settings on import. Values already
in the environment win, so a user can point at another Prefect server or MLflow store.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

from tasks.core.inputs import env_int


def port_setting(name: str, default: int) -> int:
    """A TCP port from the environment variable `name`; an unusable value is an InputError naming it."""
    return env_int(name, default, low=1, high=65535, note="a TCP port")


def prefect_port() -> int:
    return port_setting("PAPERS_PREFECT_PORT", 4200)


def mlflow_ui_port() -> int:
    return port_setting("PAPERS_MLFLOW_PORT", 5000)


def check_settings() -> None:
    """Every PAPERS_* number a command or a stage reads, checked once at the start: a bad one is refused as one line
    naming the variable and its value (an InputError), before any work, not deep inside a stage."""
    from flows.runtime import max_workers

    prefect_port()
    mlflow_ui_port()
    max_workers()


_OFFLINE = {  # no internet here: telemetry and update checks off everywhere
    "DO_NOT_TRACK": "true",
    "MLFLOW_DISABLE_TELEMETRY": "true",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "DVC_NO_ANALYTICS": "1",
    "PREFECT_CLIENT_ENABLE_METRICS": "false",
    "MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR": "false",
}


def home_repository(root: Path) -> Path:
    """The user's checkout: `root` itself, or the one whose `.dvc/tmp/exps/` holds it (a `dvc exp run
    --temp` copy, which must track to the checkout's MLflow store and Prefect server, not to its own)."""
    parts = root.resolve().parts
    for i in range(len(parts) - 2):
        if parts[i:i + 3] == (".dvc", "tmp", "exps"):
            return Path(*parts[:i])
    return root.resolve()


def configure(root: Path) -> None:
    """Point Prefect at the project's one local server, with its state under .prefect/ (0700) and the
    checkout's API credential (see prefect_auth). The PAPERS_* settings are checked first (check_settings)."""
    check_settings()
    for key, value in _OFFLINE.items():
        os.environ.setdefault(key, value)
    os.environ.setdefault("PREFECT_HOME", str(home_repository(root) / ".prefect"))
    if "PREFECT_API_URL" not in os.environ:  # the local server: ours to authenticate (another is the user's)
        os.environ["PREFECT_API_URL"] = f"http://127.0.0.1:{prefect_port()}/api"
        os.environ.setdefault("PREFECT_API_AUTH_STRING", prefect_auth(Path(os.environ["PREFECT_HOME"])))
    os.environ.setdefault("PREFECT_SERVER_API_HOST", "127.0.0.1")
    os.environ.setdefault("PREFECT_SERVER_API_PORT", str(prefect_port()))
    os.environ.setdefault("PAPERS_ROOT", str(root.resolve()))
    os.environ.setdefault("GIT_PYTHON_REFRESH", "quiet")
    use_this_interpreter(os.environ)


def prefect_auth(home: Path) -> str:
    """The local Prefect server's API credential, generated per checkout into PREFECT_HOME/api-auth (0600): the
    server starts with it (PREFECT_SERVER_API_AUTH_STRING) and every client sends it (PREFECT_API_AUTH_STRING),
    so another local account gets 401 from the API."""
    from tasks.core.private import private_folder, secret

    return "papers:" + secret(private_folder(home, tighten=True) / AUTH_FILE)


AUTH_FILE = "api-auth"


def use_this_interpreter(env: dict) -> dict:
    """Put this interpreter's folder first on PATH: stage commands in dvc.yaml call `python`, which
    must be the project's environment even from a plain shell (a worker started without the venv)."""
    folder = str(Path(sys.executable).parent)
    if env.get("PATH", "").split(os.pathsep)[0] != folder:
        env["PATH"] = os.pathsep.join([folder, *[p for p in env.get("PATH", "").split(os.pathsep) if p]])
    return env
