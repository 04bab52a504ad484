"""What a stage flow receives and returns, so the process entry can do all the bookkeeping."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class StageContext:
    """root: repository root; profile: active profile; commit: git sha for claims.json; device: resolved torch
    device; inputs: the names (under data/<paper>/) the stage declares it reads; outputs: each declared output's
    name -> the temporary path the stage writes it to (moved into place only if the stage succeeds)."""

    root: Path
    paper: str
    profile: str
    commit: str
    device: str
    inputs: tuple[str, ...]
    outputs: dict[str, Path]

    def out(self, name: str) -> Path:
        """Where to write the declared output `name` (e.g. "runs", "summary.csv")."""
        if name not in self.outputs:
            raise KeyError(f"{name!r} is not a declared output of this stage of {self.paper} "
                           f"(flows/{self.paper}/paper.py declares: {', '.join(sorted(self.outputs)) or 'none'})")
        return self.outputs[name]

    def data(self, name: str, *parts: str) -> Path:
        """The declared input `name` written by an earlier stage, or a file inside it: data("runs", "a.npz")."""
        if name not in self.inputs:
            raise KeyError(f"{name!r} is not a declared input of this stage of {self.paper} "
                           f"(flows/{self.paper}/paper.py declares: {', '.join(self.inputs) or 'none'})")
        return self.root.joinpath("data", self.paper, name, *parts)


@dataclass
class StageReport:
    """metrics: scalars; curves: name -> values by step (or (step, value) pairs); tags: extra run tags; models: registered
    model name -> a file among the stage's outputs, under data/<paper>/ (logged and registered in MLflow's registry); claims: the paper's
    claims, from its claims stage (the runner writes claims.json and metrics.json from them and `headline`, the few
    numbers the paper names beside its claims)."""

    metrics: dict[str, float] = field(default_factory=dict)
    curves: dict[str, list] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    models: dict[str, str] = field(default_factory=dict)
    claims: list | None = None  # of tasks.core.claims.Claim, not imported: its edits must not rerun every stage
    headline: dict[str, float | None] = field(default_factory=dict)
