"""Runs at another profile than the committed one, as DVC experiments in a temporary copy.

`papers run --profile smoke` on a checkout whose params.yaml says `default` must not rewrite
params.yaml and every dvc.lock (each later run would be tagged dirty): it runs
`dvc exp run --temp -S profile=...`, which reproduces in a copy under `.dvc/tmp/exps/` and keeps
the results as an experiment (`dvc exp show`, `dvc exp apply NAME`). Its stages track to this
checkout's MLflow store and Prefect server (stages.environment.home_repository), and its claims
are read back from the experiment's commit.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from .spec import papers


def experiment_name(paper: str, profile: str) -> str:
    return f"{paper}-{profile}-{time.strftime('%Y%m%d-%H%M%S')}"


def experiment_command(profile: str, target: list[str], name: str, force: bool) -> list[str]:
    """`dvc exp run --temp` at `profile`, named `name`."""
    return [sys.executable, "-m", "dvc", "exp", "run", "--temp", "-S", f"profile={profile}", "-n", name,
            *(["--force"] if force else []), *target]


def experiment_claims(root: Path, name: str, profile: str) -> list[dict]:
    """Every paper's claims.json as the experiment `name` recorded it at `profile` (the committed results of
    papers it did not run are left out)."""
    import dvc.api
    from dvc.exceptions import DvcException

    documents = []
    for paper in papers(root):
        try:
            document = json.loads(dvc.api.read(f"data/{paper}/claims.json", repo=str(root), rev=name))
        except (DvcException, FileNotFoundError):
            continue
        if document.get("profile") == profile:
            documents.append(document)
    return documents
