"""Every paper's own declaration, `PAPER` of `flows/<paper>/paper.py` (see flows/declaration.py), found by
discovery: a paper is the package that declares itself, and no shared file names it."""
from __future__ import annotations

import importlib
from pathlib import Path
from typing import NamedTuple

from flows.declaration import Paper


class DeclarationError(ValueError):
    """A paper's declaration that the project cannot use; str(error) names the paper and the field."""


class PaperCommand(NamedTuple):
    """`papers <name>`: the typer app at `source` ("module:attribute"), listed with `summary`."""
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


def paper_commands(root: Path) -> list[PaperCommand]:
    """Every paper's `papers` sub-commands, in paper order; a name two papers (or one twice) declare is an error."""
    commands: dict[str, PaperCommand] = {}
    for paper, declared in declarations(root).items():
        for name, command in declared.commands.items():
            if name in commands:
                raise DeclarationError(f"flows/{paper}/paper.py: the command name {name!r} is taken by "
                                       f"{commands[name].paper}; choose another")
            commands[name] = PaperCommand(name, f"flows.{paper}.cli:{command.app}", command.summary, paper)
    return list(commands.values())
