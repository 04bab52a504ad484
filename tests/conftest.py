"""Shared fixtures: the repository, a throwaway copy of it, and the environment stages run in."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def project_files(root: Path) -> list[str]:
    """Tracked and untracked-but-not-ignored files: what a clean clone of this work tree holds."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=root,
                            capture_output=True, text=True, check=True).stdout
    return [f for f in listed.split("\0") if f and (root / f).is_file()]


def stage_env(root: Path) -> dict[str, str]:
    """Environment of a stage process in `root`: the venv first on PATH, the shared Prefect server,
    a store of its own (the copy's mlflow/), no inherited invocation id."""
    env = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_TRACKING_URI", "PAPERS_INVOCATION", "PAPERS_ROOT")}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["PAPERS_ROOT"] = str(root)
    return env


@pytest.fixture
def repo_copy(tmp_path: Path) -> Path:
    """A committed copy of the project (a fresh git repo) with the smoke profile active."""
    copy = tmp_path / "repo"
    for name in project_files(ROOT):
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, copy / name)
    (copy / "params.yaml").write_text((copy / "params.yaml").read_text().replace("profile: default", "profile: smoke"))
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@example.com"]
    subprocess.run(["git", "init", "-q"], cwd=copy, check=True)
    subprocess.run(["git", "add", "-A"], cwd=copy, check=True)
    subprocess.run([*git, "commit", "-qm", "copy"], cwd=copy, check=True)
    return copy


@pytest.fixture(scope="session")
def prefect_server():
    """The project's local Prefect server (make test starts it; started here when it is not up)."""
    from stages.environment import configure

    configure(ROOT)
    from stages import server

    server.start()
    return server.api_url()
