"""The deployed pipeline: a scheduled run reproduces a paper's DVC stages.

Going through `dvc repro` (not calling the stage flows directly) keeps a scheduled run cached
and versioned exactly like a manual one: unchanged stages are skipped, changed ones rerun.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from prefect import flow, get_run_logger


@flow(name="reproduce-paper")
def reproduce_paper(paper: str, root: str | None = None) -> int:
    """Run `dvc repro stages/<paper>/dvc.yaml` in the repository at `root` (default: cwd)."""
    logger = get_run_logger()
    workdir = Path(root or os.environ.get("PAPERS_ROOT") or Path.cwd())
    target = Path("stages") / paper / "dvc.yaml"
    if not (workdir / target).exists():
        raise FileNotFoundError(f"paper {paper!r}: no {target} under {workdir}")
    logger.info("dvc repro %s in %s", target, workdir)
    # dvc.yaml's commands call `python`: this interpreter's, even when the worker runs in a plain shell.
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    done = subprocess.run([sys.executable, "-m", "dvc", "repro", str(target)], cwd=workdir, env=env,
                          capture_output=True, text=True)
    logger.info(done.stdout[-5000:])
    if done.returncode != 0:
        raise RuntimeError(f"dvc repro {target} failed ({done.returncode}):\n{done.stderr[-5000:]}")
    return done.returncode
