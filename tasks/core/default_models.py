"""Default models: the trained models a fresh clone's commands use when its MLflow store has none.

A stage declared with `models=True` (flows/<paper>/paper.py) registers the models it trained in MLflow and
commits a copy of each, `data/<paper>/default_models/<registered name><suffix>`, beside a provenance file
`<registered name>.json` (profile, commit, dirty flag, MLflow run, md5). A command resolving a registered
name looks in the store first (a model trained here), then here; either way it says which model it used.

Standard library only: the commands import it before their heavy libraries.
"""
from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from tasks.core.io import file_md5

FOLDER = "default_models"  # the output a stage declared with `models=True` writes (git keeps it)
BUDGET_BYTES = 8_000_000  # per paper: what git keeps of its default models (tests/platform/test_committed_results.py)


@dataclass(frozen=True)
class DefaultModel:
    name: str      # the registered model name, `<paper>-<what>`
    path: Path     # the committed file
    profile: str
    commit: str
    dirty: bool

    def describe(self, root: Path) -> str:
        tree = ", dirty tree" if self.dirty else ""
        toy = " (a toy run: `papers run` with the default profile trains a real one)" if self.profile == "smoke" else ""
        return (f"the committed default {self.name} ({self.path.relative_to(root)}: profile {self.profile}, "
                f"commit {self.commit[:10]}{tree}){toy}")


def write_default_models(folder: Path, paper: str, models: dict[str, Path], profile: str, commit: str,
                         dirty: bool, run_id: str) -> None:
    """Copy each model file (registered name -> its staged file) into `folder` with its provenance."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, source in sorted(models.items()):
        if not name.startswith(f"{paper}-"):
            raise ValueError(f"model {name!r} of {paper}: a registered name starts with '{paper}-'")
        if not source.is_file():
            raise ValueError(f"model {name!r}: {source} is not a file")
        target = folder / f"{name}{source.suffix}"
        shutil.copyfile(source, target)
        provenance = {"model": name, "file": target.name, "paper": paper, "profile": profile, "commit": commit,
                      "git_dirty": dirty, "mlflow_run_id": run_id, "md5": file_md5(target)}
        (folder / f"{name}.json").write_text(json.dumps(provenance, indent=2) + "\n")


def committed_default(root: Path, name: str) -> DefaultModel | None:
    """The committed default of the registered model `name`, None where the clone has none (or it is broken:
    a provenance file that does not match its model is not used)."""
    paper = name.partition("-")[0]
    if not paper.isidentifier() or "/" in name or "@" in name:
        return None
    folder = root / "data" / paper / FOLDER
    try:
        provenance = json.loads((folder / f"{name}.json").read_text())
        path = folder / provenance["file"]
        if Path(provenance["file"]).name != provenance["file"] or file_md5(path) != provenance["md5"]:
            return None
        return DefaultModel(name, path, str(provenance["profile"]), str(provenance["commit"]),
                            bool(provenance["git_dirty"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
