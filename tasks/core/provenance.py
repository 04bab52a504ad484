"""Where a result came from: git commit and whether the work tree had uncommitted changes."""
from __future__ import annotations

import shutil
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


# What a repro itself rewrites: dvc.lock and .gitignore (DVC), the committed results under data/ and reports/
# (DVC deletes a stage's outputs before it runs) and the READMEs' results tables generated from them. A run is
# not "dirty" because it, or an earlier run of the same code, changed these: dirty means code or params.
# What a run itself rewrites: the locks, DVC's .gitignore files, the results, and the generated tables of the READMEs
# (each paper's results, the root README's paper table): none of them is code or params.
WRITTEN_BY_DVC = (":(exclude,glob)**/dvc.lock", ":(exclude,glob)**/.gitignore", ":(exclude)data", ":(exclude)reports",
                  ":(exclude,glob)stages/*/README.md", ":(exclude)README.md")


def git_dirty(root: Path) -> bool:
    """True when tracked files differ from the commit (untracked files and what DVC writes do not count)."""
    status = _git(root, "status", "--porcelain", "--untracked-files=no", "--", ".", *WRITTEN_BY_DVC)
    return bool(status)


def project_files(root: Path) -> list[str]:
    """Tracked and untracked-but-not-ignored files: what a clean clone of this work tree holds."""
    listed = _git(root, "ls-files", "--cached", "--others", "--exclude-standard", "-z") or ""
    return [name for name in listed.split("\0") if name and (root / name).is_file()]


def copy_project_files(root: Path, destination: Path) -> Path:
    """The files a clean clone of the work tree holds, copied to `destination` (an image's build context)."""
    for name in project_files(root):
        (destination / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, destination / name)
    return destination


def copy_project(root: Path, destination: Path) -> Path:
    """A committed copy of the project in a fresh git repository (for tests and benchmarks)."""
    copy_project_files(root, destination)
    identity = ["-c", "user.name=papers", "-c", "user.email=papers@localhost"]
    for command in (["init", "-q"], ["add", "-A"], [*identity, "commit", "-qm", "copy of the project"]):
        subprocess.run(["git", *command], cwd=destination, check=True, capture_output=True)
    return destination
