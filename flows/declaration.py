"""What a paper package declares about itself in `flows/<paper>/paper.py` (its `PAPER`), and what the
project derives from it: the `papers` sub-commands, the nightly and in-image deployments of prefect.yaml,
the README's paper table (`python -m stages.generate` writes the last two; `--check` says where they differ).
Plain data with no imports, so `papers --help` reads every paper's declaration in milliseconds."""
from __future__ import annotations

from typing import NamedTuple


class Command(NamedTuple):
    """A `papers <name>` sub-command: the typer app `app` of `flows/<paper>/cli.py`, described by `summary`
    (the app's own help, which the app takes from here)."""
    app: str
    summary: str


class Paper(NamedTuple):
    title: str                 # the paper's title, as the README's table shows it
    pipeline: str              # the pipeline in a few words: "Reproduce the <pipeline> pipeline (dvc repro) every night."
    nightly: str               # cron (UTC) of its nightly deployment; papers are spread over the night
    commands: dict[str, Command] = {}  # `papers <name> ...`, none where the paper has no entry point of its own
