"""Every paper's own declaration, `PAPER` of `flows/<paper>/paper.py` (see flows/declaration.py), found by
discovery: a paper is the package that declares itself, and no shared file names it."""
from __future__ import annotations

import importlib
from pathlib import Path
from typing import NamedTuple

from flows.declaration import Paper, Stage


class DeclarationError(ValueError):
    """A paper's declaration that the project cannot use; str(error) names the paper and the field."""


class PaperCommand(NamedTuple):
    """`papers <name>` (the paper's slug with hyphens): the typer app at `source` ("module:attribute"), listed with
    `summary`."""
    name: str
    source: str
    summary: str
    paper: str


def declared_papers(root: Path) -> list[str]:
    """The slugs of the packages under flows/ with a paper.py, sorted."""
    return sorted(path.parent.name for path in (root / "flows").glob("*/paper.py"))


def declaration(paper: str) -> Paper:
    declared = getattr(importlib.import_module(f"flows.{paper}.paper"), "PAPER", None)
    if not isinstance(declared, Paper):
        raise DeclarationError(f"flows/{paper}/paper.py: PAPER must be a flows.declaration.Paper, got {declared!r}")
    return declared


def declarations(root: Path) -> dict[str, Paper]:
    """{slug: its Paper} for every declared paper, in slug order."""
    return {paper: declaration(paper) for paper in declared_papers(root)}


def command_name(paper: str) -> str:
    """`papers <name>` of a paper: its slug with hyphens."""
    return paper.replace("_", "-")


def paper_commands(root: Path) -> list[PaperCommand]:
    """Every paper's `papers` sub-command, in paper order."""
    return [PaperCommand(command_name(paper), f"flows.{paper}.cli:{declared.command.app}", declared.command.summary, paper)
            for paper, declared in declarations(root).items() if declared.command is not None]

def _valid_name(name: str) -> bool:
    """A path under data/<paper>/: relative, no `..`, no empty part."""
    parts = name.split("/")
    return bool(name) and not name.startswith("/") and all(part not in ("", ".", "..") for part in parts)


def check_stages(root: Path, paper: str, declared: Paper) -> None:
    """The stages can run in their declared order: names unique, each input an output of an earlier stage, each
    output written by one stage, each stage a flow of the pipeline's STAGES (checked when its deps are read)."""
    where = f"flows/{paper}/paper.py"
    if not declared.stages or not all(isinstance(stage, Stage) for stage in declared.stages):
        raise DeclarationError(f"{where}: stages must be a non-empty tuple of flows.declaration.Stage, got {declared.stages!r}")
    written: dict[str, str] = {}
    for stage in declared.stages:
        if not stage.name.isidentifier():
            raise DeclarationError(f"{where}: stage name {stage.name!r} must be an identifier")
        if stage.name in {s.name for s in declared.stages[: declared.stages.index(stage)]}:
            raise DeclarationError(f"{where}: stage {stage.name!r} is declared twice")
        for name in stage.inputs:
            if name not in written:
                raise DeclarationError(f"{where}: stage {stage.name!r} reads {name!r}, which no earlier stage writes "
                                       f"(written so far: {', '.join(written) or 'nothing'})")
        for name in stage.written:
            if not _valid_name(name):
                raise DeclarationError(f"{where}: stage {stage.name!r} output {name!r} must be a relative path under "
                                       f"data/{paper}/ without '..'")
            if name in written:
                raise DeclarationError(f"{where}: {name!r} is written by both {written[name]!r} and {stage.name!r}")
            written[name] = stage.name
