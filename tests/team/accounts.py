"""Two local accounts with a checkout each, as two machines of a team: the tests run as root (CI does), create
`papers-team-a` (the team host and first member) and `papers-team-b`, and act as each through `setpriv`.

Their interpreter: the project's environment may lie in a folder other accounts cannot enter (its Python under
/root), so they get a venv of the system's python3 (the same minor version) whose import path is the project
environment's site-packages (read-only to them), with its console scripts pointed at that venv."""
from __future__ import annotations

import os
import pwd
import re
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import pytest

SYSTEM_PYTHON = "/usr/bin/python3"
BACKPORTS = ("async-timeout==5.0.1",)
SCRIPTS = ("mlflow", "prefect", "dask", "dvc")  # what stages/team_services.py and the tests start by name


def shared_venv(path: Path) -> Path:
    """A venv at `path` (root's, readable by all) that imports what the project's environment holds; made once."""
    python = path / "bin" / "python"
    if python.exists():
        return path
    version = subprocess.run([SYSTEM_PYTHON, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True,
                             text=True, check=True).stdout.strip()
    if version != str(sys.version_info[:2]):
        pytest.skip(f"{SYSTEM_PYTHON} is Python {version}, the project's environment {sys.version_info[:2]}")
    subprocess.run([SYSTEM_PYTHON, "-m", "venv", "--without-pip", str(path)], check=True)
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    # A path line, not our .pth files: the project's editable install would map `stages` to this checkout.
    (site / "papers-environment.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    # Debian 12's python3 is 3.11.2: redis (Prefect's docket) takes asyncio.timeout from 3.11.3 on, else this package.
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site),
                    *BACKPORTS], check=True, capture_output=True)
    for name in SCRIPTS:
        text = (Path(sys.executable).parent / name).read_text()
        (path / "bin" / name).write_text(re.sub(r"^#!.*", f"#!{python}", text, count=1))
        (path / "bin" / name).chmod(0o755)
    (path / "bin" / "papers").write_text(f'#!/bin/sh\nexec {python} -c "import sys; sys.argv[0] = \'papers\'; '
                                         f'from stages.cli import main; main()" "$@"\n')
    (path / "bin" / "papers").chmod(0o755)
    return path


@dataclass(frozen=True)
class Account:
    name: str
    uid: int
    gid: int
    home: Path
    venv: Path

    def environment(self, **extra: str) -> dict[str, str]:
        return {"PATH": f"{self.venv / 'bin'}:/usr/bin:/bin:/usr/sbin", "HOME": str(self.home), "USER": self.name,
                "LANG": "C.UTF-8", "DO_NOT_TRACK": "true", "DVC_NO_ANALYTICS": "1", **extra}

    def run(self, command: list[str], cwd: Path, timeout: float = 600, env: dict | None = None) -> subprocess.CompletedProcess:
        """`command` as this account (its uid and gid, no other groups, a clean environment), in `cwd`."""
        return subprocess.run(["setpriv", f"--reuid={self.uid}", f"--regid={self.gid}", "--clear-groups", *command],
                              cwd=cwd, env=self.environment(**(env or {})), capture_output=True, text=True,
                              timeout=timeout)

    def give(self, path: Path) -> None:
        """Hand `path` (a folder tree root made) to this account."""
        for folder, _, files in os.walk(path):
            os.chown(folder, self.uid, self.gid)
            for name in files:
                os.chown(os.path.join(folder, name), self.uid, self.gid, follow_symlinks=False)


def account(name: str, venv: Path) -> Account:
    if os.geteuid() != 0:
        pytest.skip("two local accounts need root to create (CI runs as root)")
    if shutil.which("setpriv") is None:
        pytest.skip("needs setpriv to act as another account")
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/sh", name], check=True, capture_output=True)
        entry = pwd.getpwnam(name)
    Path(entry.pw_dir).chmod(0o700)
    return Account(name, entry.pw_uid, entry.pw_gid, Path(entry.pw_dir), venv)
