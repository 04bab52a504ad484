"""What a stage flow receives and returns, so the process entry can do all the bookkeeping."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class StageContext:
    """root: repository root; profile: active profile; commit: git sha for claims.json;
    device: resolved torch device; outputs: declared output (relative to root) -> the temporary
    path the stage must write it to (moved into place only if the stage succeeds)."""

    root: Path
    paper: str
    profile: str
    commit: str
    device: str
    outputs: dict[str, Path]

    def out(self, relative: str) -> Path:
        if relative not in self.outputs:
            raise KeyError(f"{relative} is not a declared output of this stage (dvc.yaml outs: {sorted(self.outputs)})")
        return self.outputs[relative]

    def data(self, relative: str) -> Path:
        """An input written by an earlier stage."""
        return self.root / relative


@dataclass
class StageReport:
    """metrics: scalars; curves: name -> values by step (or (step, value) pairs); tags: extra run tags; models: registered
    model name -> a file among the stage's outputs (logged and registered in MLflow's registry)."""

    metrics: dict[str, float] = field(default_factory=dict)
    curves: dict[str, list] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    models: dict[str, str] = field(default_factory=dict)
