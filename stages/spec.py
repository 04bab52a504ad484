"""The pipeline as DVC declares it: papers are the folders of stages/ with a dvc.yaml.

dvc.yaml is the one source of truth for a stage's deps and outs; the process entry reads it
to know what to hash (run lookup) and what to write atomically.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import yaml


@dataclass(frozen=True)
class StageSpec:
    paper: str
    stage: str
    cmd: str
    deps: tuple[str, ...]
    outs: tuple[str, ...]
    params: dict[str, tuple[str, ...]]


def papers(root: Path) -> list[str]:
    return sorted(p.parent.name for p in (root / "stages").glob("*/dvc.yaml"))


def _paths(entries) -> tuple[str, ...]:
    return tuple(next(iter(e)) if isinstance(e, dict) else e for e in entries or [])


def paper_stages(root: Path, paper: str) -> list[StageSpec]:
    """The paper's stages in dvc.yaml order (names `<paper>-<stage>`), params keys at the active profile (dvc.yaml
    names them `<paper>.${profile}`, which DVC fills in from the root params.yaml as this does)."""
    path = root / "stages" / paper / "dvc.yaml"
    if not path.exists():
        raise KeyError(f"unknown paper {paper!r}: no {path.relative_to(root)} (papers: {', '.join(papers(root))})")
    stages = yaml.safe_load(path.read_text())["stages"]
    profile = str((yaml.safe_load((root / "params.yaml").read_text()) or {}).get("profile"))
    specs = []
    for name, body in stages.items():
        params = {}
        for entry in body.get("params", []):
            for file, keys in (entry.items() if isinstance(entry, dict) else [("params.yaml", [entry])]):
                params[file] = tuple(key.replace("${profile}", profile) for key in keys)
        outs = _paths(body.get("outs")) + _paths(body.get("metrics")) + _paths(body.get("plots"))
        specs.append(StageSpec(paper, name.removeprefix(f"{paper}-"), body["cmd"], _paths(body.get("deps")), outs, params))
    return specs


def stage_spec(root: Path, paper: str, stage: str) -> StageSpec:
    for spec in paper_stages(root, paper):
        if spec.stage == stage:
            return spec
    known = ", ".join(s.stage for s in paper_stages(root, paper))
    raise KeyError(f"unknown stage {stage!r} of {paper} (stages: {known})")


def paper_pipeline(paper: str) -> ModuleType:
    """The paper's wiring module `flows/<paper>/pipeline.py`: its typed `Params` and `STAGES`."""
    return importlib.import_module(f"flows.{paper}.pipeline")
