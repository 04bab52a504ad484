"""What a paper package declares about itself in `flows/<paper>/paper.py` (its `PAPER`), and what the
project derives from it: `stages/<paper>/dvc.yaml`, the `papers` sub-commands, the nightly and in-image
deployments of prefect.yaml, the root report stage and the README's paper table (`python -m stages.generate`
writes them; `--check` says where they differ). Plain data with standard-library imports only, so `papers --help`
reads every paper's declaration in milliseconds."""
from __future__ import annotations

from typing import NamedTuple

from tasks.core.default_models import FOLDER as DEFAULT_MODELS


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
    `claims` returns the paper's claims, and the runner writes claims.json and metrics.json from them. A stage with
    `models` returns the trained models it registers, and the runner commits a copy of each under
    `default_models/` with its provenance: the model a fresh clone's commands use when the MLflow store has none."""
    name: str
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    committed: tuple[str, ...] = ()
    plots: tuple[str, ...] = ()
    claims: bool = False
    models: bool = False

    @property
    def kept_in_git(self) -> tuple[str, ...]:
        """The outputs git keeps (`cache: false`) beside the plots and metrics.json."""
        return (("claims.json",) if self.claims else ()) + self.committed + ((DEFAULT_MODELS,) if self.models else ())

    @property
    def written(self) -> tuple[str, ...]:
        """Every name the stage writes under data/<paper>/."""
        return (*self.outputs, *self.kept_in_git, *self.plots, *(("metrics.json",) if self.claims else ()))


class Paper(NamedTuple):
    title: str                 # the paper's title, as the README's table shows it
    pipeline: str              # the pipeline in a few words: "Reproduce the <pipeline> pipeline (dvc repro) every night."
    nightly: str               # cron (UTC) of its nightly deployment; papers are spread over the night
    stages: tuple[Stage, ...]  # in the order they run
    command: Command | None = None  # `papers <slug> ...`, none where the paper has no entry point of its own
