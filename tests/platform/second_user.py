"""A second local account, as the attacker on a shared machine: tests run as root (CI does) and act as
`papers-other` through `setpriv`, with the system's python3 (the project's venv may lie in a folder the
other account cannot enter, as /root does) and nothing of ours in its environment."""
from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

NAME = "papers-other"
SYSTEM_PYTHON = "/usr/bin/python3"


@dataclass(frozen=True)
class OtherUser:
    name: str
    uid: int
    gid: int
    home: Path

    def run(self, command: list[str], timeout: float = 60, cwd: str = "/", env: dict | None = None,
            **kwargs) -> subprocess.CompletedProcess:
        """`command` as this account: its uid, gid and no supplementary groups, a clean environment."""
        environment = {"PATH": "/usr/bin:/bin", "HOME": str(self.home), "LANG": "C.UTF-8", **(env or {})}
        return subprocess.run(["setpriv", f"--reuid={self.uid}", f"--regid={self.gid}", "--clear-groups", *command],
                              cwd=cwd, env=environment, capture_output=True, text=True, timeout=timeout, **kwargs)

    def python(self, script: str, *args: str, timeout: float = 60, env: dict | None = None) -> subprocess.CompletedProcess:
        """A standard-library Python script run as this account."""
        return self.run([SYSTEM_PYTHON, "-c", script, *args], timeout=timeout, env=env)

    def popen(self, script: str, *args: str, env: dict | None = None) -> subprocess.Popen:
        environment = {"PATH": "/usr/bin:/bin", "HOME": str(self.home), "LANG": "C.UTF-8", **(env or {})}
        return subprocess.Popen(["setpriv", f"--reuid={self.uid}", f"--regid={self.gid}", "--clear-groups",
                                 SYSTEM_PYTHON, "-c", script, *args], cwd="/", env=environment,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def folder(self, parent: str = "/tmp") -> Path:
        """A fresh folder this account owns (mode 0755), in a place both accounts reach."""
        path = Path(tempfile.mkdtemp(prefix="papers-other-", dir=parent))
        os.chown(path, self.uid, self.gid)
        path.chmod(0o755)
        return path


def other_user() -> OtherUser:
    """The second account, created on first use; skips where this process cannot create one (not root)."""
    if os.geteuid() != 0:
        pytest.skip("a second local account needs root to create (CI runs as root)")
    if shutil.which("setpriv") is None or not Path(SYSTEM_PYTHON).exists():
        pytest.skip(f"needs setpriv and {SYSTEM_PYTHON} to act as a second account")
    return OtherUser(NAME, *created_account())


def created_account(wait_s: float = 60) -> tuple[int, int, Path]:
    """(uid, gid, home) of the second account, made here unless it exists. Another test process (make test runs
    several) may be creating it at the same moment: its useradd then holds the passwd lock and ours fails, so
    look again until it shows up."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            entry = pwd.getpwnam(NAME)
            return entry.pw_uid, entry.pw_gid, Path(entry.pw_dir)
        except KeyError:
            made = subprocess.run(["useradd", "--create-home", "--shell", "/bin/sh", NAME], capture_output=True,
                                  text=True)
            if made.returncode != 0 and time.monotonic() > deadline:
                raise RuntimeError(f"useradd {NAME} failed: {made.stderr.strip()}") from None
            if made.returncode != 0:
                time.sleep(0.5)


@pytest.fixture(scope="session")
def other() -> OtherUser:
    return other_user()
