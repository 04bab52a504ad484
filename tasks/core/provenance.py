"""Where a result came from: git commit and whether the work tree had uncommitted changes."""
from __future__ import annotations

import subprocess
from pathlib import Path


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def git_commit(root: Path) -> str:
    return _git(root, "rev-parse", "HEAD") or "unknown"


def git_dirty(root: Path) -> bool:
    """True when tracked files differ from the commit (untracked files do not count)."""
    status = _git(root, "status", "--porcelain", "--untracked-files=no")
    return bool(status)
