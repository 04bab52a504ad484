"""What a paper package declares about itself in `flows/<paper>/paper.py` (its `PAPER`), and what the
project derives from it: `stages/<paper>/dvc.yaml`, the `papers` sub-commands, the nightly and in-image
deployments of prefect.yaml, the root report stage and the README's paper table (`python -m stages.generate`
writes them; `--check` says where they differ). Plain data with no imports, so `papers --help` reads every
paper's declaration in milliseconds."""
from __future__ import annotations

from typing import NamedTuple


class Command(NamedTuple):
    """The paper's `papers <slug>` sub-command (the slug with hyphens: `papers mip-early-stop`): the typer app `app`
    of `flows/<paper>/cli.py`, described by `summary` (the app's own help, which the app takes from here)."""
    app: str
    summary: str


class Stage(NamedTuple):
    """The DVC stage `<paper>-<name>`: it runs `STAGES[name]` of `flows/<paper>/pipeline.py`.

    Every name is a path under `data/<paper>/`; the flow reaches them as `context.data(name)` and
    `context.out(name)`. `inputs` are outputs of earlier stages; `outputs` go to DVC's cache; `committed` are
    small tables that git keeps (`cache: false`); `plots` are committed folders of figures. A stage with
    `claims` returns the paper's claims, and the runner writes claims.json and metrics.json from them."""
    name: str
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    committed: tuple[str, ...] = ()
    plots: tuple[str, ...] = ()
    claims: bool = False


class Paper(NamedTuple):
    title: str                 # the paper's title, as the README's table shows it
    pipeline: str              # the pipeline in a few words: "Reproduce the <pipeline> pipeline (dvc repro) every night."
    nightly: str               # cron (UTC) of its nightly deployment; papers are spread over the night
    stages: tuple[Stage, ...]  # in the order they run
    command: Command | None = None  # `papers <slug> ...`, none where the paper has no entry point of its own
