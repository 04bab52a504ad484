"""Run one DVC stage: validate params, open its MLflow run, run its Prefect flow, write outputs.

`python -m stages <paper> <stage>` is the command of every stage in dvc.yaml. The order of
work matters: the run is opened first so that a failure of any kind (bad params included) is
recorded as FAILED, and outputs are written to temporary twins and moved into place only on
success, so DVC never takes a half-written file for a result. The claims a stage returns become its
claims.json, stamped with the MLflow run's id and the work tree's dirty flag, and its metrics.json.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
import traceback
from pathlib import Path

import psutil

from tasks.core.claims import claims_document, headline_metrics
from tasks.core.default_models import FOLDER as DEFAULT_MODELS
from tasks.core.default_models import write_default_models
from tasks.core.device import resolve_device
from tasks.core.io import atomic_outputs, path_md5, write_json
from tasks.core.params import ParamsError, active_profile, load_paper_params, read_yaml
from tasks.core.provenance import git_commit, git_dirty
from tasks.core.stage import StageContext, StageReport

from . import server
from .data_checks import BrokenInput, check_array_deps
from .environment import home_repository
from .flow_runs import pid_tag, stage_tags
from .guard import StageGuard
from .spec import StageSpec, paper_pipeline, stage_spec
from .tracking import Tracker, TrackingError
from .warm import caller_pid


def invocation_id() -> str:
    """Which pipeline invocation this stage belongs to (one MLflow parent run each).

    `papers run` and `make run` set PAPERS_INVOCATION; under a bare `dvc repro` every stage is
    a child of the same dvc process, so its pid and start time name the invocation (the parents
    are the caller's when a warm host runs the stage).
    """
    if os.environ.get("PAPERS_INVOCATION"):
        return os.environ["PAPERS_INVOCATION"]
    for process in psutil.Process(caller_pid()).parents():
        try:
            args = process.cmdline()
        except psutil.Error:
            continue
        if any(Path(arg).name == "dvc" for arg in args[:2]) or args[1:3] == ["-m", "dvc"]:
            return f"dvc-{process.pid}-{int(process.create_time())}"
    return f"process-{caller_pid()}"


def input_hashes(root: Path, spec: StageSpec) -> dict[str, str]:
    """md5 of every declared dep (as dvc.lock records them) and of the declared params values."""
    hashes = {dep: path_md5(root / dep) for dep in spec.deps if (root / dep).exists()}
    for file, keys in spec.params.items():
        data = read_yaml(root / file)
        values = {key: dotted_value(data, key) for key in keys}
        hashes[f"{file}:{','.join(keys)}"] = hashlib.md5(json.dumps(values, sort_keys=True, default=str).encode()).hexdigest()
    return hashes


def dotted_value(data: dict, key: str):
    """The value at DVC's dotted params key (`<paper>.default`), None where a part is missing."""
    for part in key.split("."):
        data = data.get(part) if isinstance(data, dict) else None
    return data


def combined_hash(hashes: dict[str, str]) -> str:
    return hashlib.md5(json.dumps(hashes, sort_keys=True).encode()).hexdigest()


def data_deps(spec: StageSpec, hashes: dict[str, str]) -> dict[str, str]:
    """The deps that are data (under data/, as opposed to code), with their md5: the run's input datasets."""
    return {dep: hashes[dep] for dep in spec.deps if dep.startswith("data/") and dep in hashes}


def data_names(paths: tuple[str, ...], paper: str) -> tuple[str, ...]:
    """The names under data/<paper>/ among a stage's deps or outs (code deps left out)."""
    folder = f"data/{paper}/"
    return tuple(path.removeprefix(folder) for path in paths if path.startswith(folder))


def write_claims(context: StageContext, report: StageReport, run_id: str, dirty: bool) -> None:
    """claims.json (naming the commit, the MLflow run and whether the tree was dirty) and metrics.json (each claim's
    value and verdict, then the headline numbers) from the claims the stage returned."""
    document = claims_document(context.paper, context.profile, context.commit, report.claims)
    claims = document.pop("claims")
    write_json(context.out("claims.json"), {**document, "git_dirty": dirty, "mlflow_run_id": run_id, "claims": claims})
    write_json(context.out("metrics.json"), headline_metrics(report.claims, **report.headline))


def staged_file(context: StageContext, relative: str) -> Path:
    """Where the file `relative` (under data/<paper>/, inside one of the stage's outputs) is while staged."""
    for name, staged in context.outputs.items():
        if relative == name or relative.startswith(f"{name}/"):
            return staged / relative.removeprefix(name).lstrip("/")
    raise RuntimeError(f"{context.paper}: model file {relative!r} is not inside an output of the stage")


def commit_default_models(context: StageContext, report: StageReport, run_id: str, dirty: bool) -> None:
    """A committed copy of each model the stage registers, with its provenance (tasks/core/default_models.py)."""
    models = {name: staged_file(context, relative) for name, relative in report.models.items()}
    write_default_models(context.out(DEFAULT_MODELS), context.paper, models, context.profile, context.commit, dirty,
                         run_id)


def remove_stale_staging(targets: list[Path]) -> None:
    """Delete the temporary twins a killed run of this stage left beside its outputs (DVC's lock
    on the repository means no live run of the same stage can own them)."""
    for target in targets:
        for leftover in target.parent.glob(f".{target.name}.*"):
            if leftover.is_dir() and STAGING_NAME.fullmatch(leftover.name.removeprefix(f".{target.name}.")):
                shutil.rmtree(leftover, ignore_errors=True)


STAGING_NAME = re.compile(r"[a-z0-9_]{8}")  # tempfile.mkdtemp's random part, as atomic_outputs names them
CLOSE_TIMEOUT_S = 60


def run_stage(root: Path, paper: str, stage: str) -> int:
    """Exit status: 0 done, 2 invalid params, a broken array input or an MLflow store that cannot record the run
    (one line each; no output moved into place), 1 any other failure (run marked FAILED); 130/143 on
    SIGINT/SIGTERM and 1 on a lost Prefect server, both through the StageGuard."""
    spec = stage_spec(root, paper, stage)
    # MLflow starts up in its own process while this one works; under `dvc exp run --temp` it tracks to the
    # checkout's store, not to the temporary copy's.
    tracker = Tracker(home_repository(root))
    label = f"{paper}-{stage}"

    def close_failed(reason: str) -> None:
        tracker.close(ok=False, error=reason, timeout=CLOSE_TIMEOUT_S)

    with StageGuard(label, close_failed, keep_pids=(tracker.process.pid,)) as guard:
        return _run_stage(root, spec, tracker, guard)


def _run_stage(root: Path, spec: StageSpec, tracker: Tracker, guard: StageGuard) -> int:
    paper, stage = spec.paper, spec.stage
    profile = str(read_yaml(root / "params.yaml").get("profile"))
    commit, dirty = git_commit(root), git_dirty(root)
    hashes = input_hashes(root, spec)
    tags = {"paper": paper, "stage": stage, "profile": profile, "git_commit": commit,
            "git_dirty": str(dirty).lower(), "device": "unresolved",
            "stage_process": pid_tag()}  # found by it if the process dies under a warm host (stages/lost.py)
    tags.update({f"dvc.dep.{name}"[:250]: value for name, value in hashes.items()})
    tracker.open(paper, invocation_id(), combined_hash(hashes), tags)
    tracker.inputs(data_deps(spec, hashes))
    status, error = 0, None
    try:
        check_array_deps(root, spec)
        active_profile(root)
        flows = paper_pipeline(paper)
        params = load_paper_params(root, paper, profile, flows.Params)
        # Only papers whose params name a device use torch; the others skip its 1 s import.
        device = resolve_device(params.device) if hasattr(params, "device") else "cpu"
        tracker.tags({"device": device})
        tracker.params(params.model_dump(mode="json"))
        guard.watch(server.start())
        tracker.check_opened()  # a store that cannot record the run, said before the flow runs where already known
        targets = [root / out for out in spec.outs]
        remove_stale_staging(targets)
        with atomic_outputs(targets) as staged:
            for temporary in staged.values():
                guard.staged(temporary.parent)
            context = StageContext(root, paper, profile, commit, device, data_names(spec.deps, paper),
                                   {name: staged[root / out] for name, out in zip(data_names(spec.outs, paper), spec.outs)})
            from prefect import tags as prefect_tags  # here: the tracker's process starts before prefect loads

            with prefect_tags(*stage_tags()):  # lets an interrupted stage's flow runs be found and closed
                report = flows.STAGES[stage](params, context)
            guard.unwatch()
            if ("claims.json" in context.outputs) != (report.claims is not None):
                raise RuntimeError(f"{paper}-{stage}: flows/{paper}/paper.py says the stage "
                                   f"{'returns' if 'claims.json' in context.outputs else 'does not return'} claims, "
                                   f"and its flow returned {'none' if report.claims is None else 'some'}")
            if (DEFAULT_MODELS in context.outputs) != bool(report.models):
                raise RuntimeError(f"{paper}-{stage}: flows/{paper}/paper.py says the stage "
                                   f"{'registers' if DEFAULT_MODELS in context.outputs else 'does not register'} "
                                   f"models, and its flow returned {'none' if not report.models else 'some'}")
            # The only wait on the companion before close: the run is open (its id goes into claims.json and the
            # default models' provenance), else the store cannot record it and the outputs stay out of place.
            run_id = tracker.run_id(timeout=CLOSE_TIMEOUT_S)
            if report.claims is not None:
                write_claims(context, report, run_id, dirty)
            if report.models:
                commit_default_models(context, report, run_id, dirty)
        tracker.metrics(report.metrics)
        for name, values in report.curves.items():
            tracker.curve(name, values)
        tracker.tags(report.tags | {f"claim.{claim.id}": claim.verdict.word for claim in report.claims or []})
        tracker.outputs({out: root / out for out in spec.outs})
        tracker.artifacts(targets, folder="outputs")
        for name, relative in report.models.items():
            tracker.register(name, root / "data" / paper / relative, report.metrics)
    except (ParamsError, BrokenInput, TrackingError) as invalid:  # a user's params, data or store: one line
        status, error = 2, str(invalid)
        print(f"error: {invalid}", file=sys.stderr, flush=True)
    except Exception:
        status, error = 1, traceback.format_exc()
        traceback.print_exc()
    run = tracker.close(ok=status == 0, error=error, timeout=CLOSE_TIMEOUT_S)
    if run is not None:  # None: the store could not open it, as the error line said
        print(f"[{paper}-{stage}] {'done' if status == 0 else 'FAILED'}: mlflow run {run['run_id']} (profile {profile})",
              flush=True)
    return status
