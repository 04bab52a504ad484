"""MLflow bookkeeping for stage runs (the one task-library module that may import mlflow).

Layout: one experiment per paper; a parent run per pipeline invocation; a child run per attempt at
a stage, tagged with the hash of the stage's inputs: a rerun (after a failure or not) is a new run
and leaves the earlier ones as they ended. Everything goes through MlflowClient with explicit run ids,
because MLflow's active run is per thread and Prefect tasks run on other threads.

The embedded store (mlflow/: the database and the artifacts) is its owner's alone: the folder 0700,
the database 0600, so another local account reads none of the runs.

For browsing: experiments are marked model development (the kind MLflow records; its 3.17 UI does not go by it:
`papers ui` opens the UI on the model-training view by its URL), each run carries a description (its `mlflow.note.content`: what ran, on which
commit, and the claims' verdicts), and a stage's DVC data deps and outputs are its datasets.
"""
from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

from mlflow.entities import Dataset, DatasetInput, InputTag, Metric, Param, RunStatus, RunTag
from mlflow.tracking import MlflowClient
from mlflow.utils.mlflow_tags import MLFLOW_DATASET_CONTEXT, MLFLOW_RUN_NOTE

from tasks.core.claims import claims_rows, status_word
from tasks.core.private import FILE_MODE, create_file, private_folder

MAX_BATCH = 1000  # MLflow's log_batch limit on metrics per call
NOTE = MLFLOW_RUN_NOTE  # a run's Description in MLflow's UI (markdown)
EXPERIMENT_KIND = "mlflow.experimentKind"  # what kind of experiment this is, as MLflow names kinds
MODEL_DEVELOPMENT = "custom_model_development"
GUESSED_KINDS = {"", "no_inferred_type", "genai_development_inferred"}  # absent or guessed: ours to set


def tracking_uri(root: Path) -> str:
    """MLFLOW_TRACKING_URI alone selects a server; else the embedded store under mlflow/.

    Absolute paths: `dvc exp run --temp` runs in a copy of the repo, where a relative path
    would silently start a second store.
    """
    return os.environ.get("MLFLOW_TRACKING_URI") or f"sqlite:///{(root / 'mlflow' / 'mlflow.db').resolve()}"


def client_for(root: Path) -> MlflowClient:
    """A client of the tracking store; the embedded store's folder made 0700 (an older checkout's 0755
    tightened) before MLflow writes into it, its database 0600 once MLflow has created it."""
    database = private_folder(root / "mlflow", tighten=True) / "mlflow.db"
    client = MlflowClient(tracking_uri=tracking_uri(root))
    if database.exists():
        database.chmod(FILE_MODE)
    return client


STORE_LOCK_WAIT_S = 10.0  # how long a write waits for another process's lock on the embedded store


def check_store_writable(root: Path) -> None:
    """The embedded store takes a write now: its database opens, neither it nor its folder (where SQLite writes its
    journal) is read-only, and no other process holds it locked for STORE_LOCK_WAIT_S. MLflow itself retries a
    database it cannot open for minutes, warning each time; this fails at once, saying why (sqlite3's error). A
    store MLFLOW_TRACKING_URI names is its owner's business."""
    if os.environ.get("MLFLOW_TRACKING_URI"):
        return
    import sqlite3

    database = private_folder(root / "mlflow", tighten=True) / "mlflow.db"
    if not os.path.lexists(database):
        create_file(database, b"")  # an empty file is an empty SQLite database, and 0600 from the start
    connection = sqlite3.connect(f"file:{database}?mode=rw", uri=True, timeout=STORE_LOCK_WAIT_S, isolation_level=None)
    try:  # a write that changes nothing: the header's user_version set to itself, rolled back
        version = int(connection.execute("PRAGMA user_version").fetchone()[0])
        connection.execute("BEGIN IMMEDIATE")
        connection.execute(f"PRAGMA user_version = {version}")
        connection.execute("ROLLBACK")
    finally:
        connection.close()


def artifact_root(root: Path) -> Path:
    """Where the embedded store keeps artifacts, one folder per experiment: inside the private mlflow/."""
    return (root / "mlflow" / "artifacts").resolve()


def experiment_id(client: MlflowClient, paper: str, root: Path) -> str:
    """The paper's experiment, created on first use; marked model development either way (a kind a
    user chose explicitly is left alone). On a tracking server the server places the artifacts (its own store):
    a folder of the checkout that happened to create the experiment is one no other checkout can read."""
    experiment = client.get_experiment_by_name(paper)
    if experiment is None:
        served = client.tracking_uri.startswith(("http://", "https://"))
        artifacts = None if served else (artifact_root(root) / paper).as_uri()
        return client.create_experiment(paper, artifact_location=artifacts, tags={EXPERIMENT_KIND: MODEL_DEVELOPMENT})
    if experiment.tags.get(EXPERIMENT_KIND, "") in GUESSED_KINDS:
        client.set_experiment_tag(experiment.experiment_id, EXPERIMENT_KIND, MODEL_DEVELOPMENT)
    return experiment.experiment_id


def _find(client: MlflowClient, experiment: str, **tags: str):
    query = " and ".join(f"tags.{key} = '{value}'" for key, value in tags.items())
    runs = client.search_runs([experiment], filter_string=query, max_results=1, order_by=["attributes.start_time DESC"])
    return runs[0] if runs else None


def parent_run(client: MlflowClient, experiment: str, invocation: str, tags: dict[str, str]) -> str:
    """The pipeline run of this invocation, created on its first stage."""
    found = _find(client, experiment, invocation=invocation, kind="pipeline")
    if found is not None:
        if found.info.status != "FAILED":
            client.update_run(found.info.run_id, status="RUNNING")
        return found.info.run_id
    run = client.create_run(experiment, tags={**tags, "invocation": invocation, "kind": "pipeline",
                                              "mlflow.runName": f"{tags['paper']} pipeline ({tags['profile']})"})
    return run.info.run_id


def stage_run(client: MlflowClient, experiment: str, parent: str, inputs_hash: str, tags: dict[str, str]) -> tuple[str, int]:
    """(run id, start time in ms: its metrics' timestamp) of a new run for this attempt at the stage, tagged
    with its inputs hash. Never an earlier run: one that FINISHED keeps its status, tags and times when a
    rerun on the same inputs fails."""
    run = client.create_run(experiment, tags={**tags, "mlflow.parentRunId": parent, "inputs_hash": inputs_hash,
                                              "kind": "stage", "mlflow.runName": f"{tags['paper']}-{tags['stage']}"})
    return run.info.run_id, run.info.start_time


def flatten(params: dict, prefix: str = "") -> dict[str, str]:
    """{'a': {'b': [1, 2]}} -> {'a.b': '[1, 2]'}: nested keys joined by dots, leaves as text."""
    flat = {}
    for key, value in params.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(flatten(value, name + "."))
        else:
            flat[name] = str(value)
    return flat


def log_params(client: MlflowClient, run_id: str, params: dict) -> None:
    flat = [Param(k, v[:6000]) for k, v in flatten(params).items()]
    for start in range(0, len(flat), 100):
        client.log_batch(run_id, params=flat[start:start + 100])


def log_metrics(client: MlflowClient, run_id: str, values: dict[str, float], timestamp: int, step: int = 0) -> None:
    metrics = [Metric(k, float(v), timestamp, step) for k, v in values.items() if v is not None]
    for start in range(0, len(metrics), MAX_BATCH):
        client.log_batch(run_id, metrics=metrics[start:start + MAX_BATCH])


def log_curve(client: MlflowClient, run_id: str, name: str, values, timestamp: int) -> None:
    """values: one per step 0, 1, ..., or (step, value) pairs where steps are sparse."""
    pairs = [tuple(v) if isinstance(v, (list, tuple)) else (step, v) for step, v in enumerate(values)]
    metrics = [Metric(name, float(v), timestamp, int(step)) for step, v in pairs]
    for start in range(0, len(metrics), MAX_BATCH):
        client.log_batch(run_id, metrics=metrics[start:start + MAX_BATCH])


def log_artifacts(client: MlflowClient, run_id: str, paths: list[Path], folder: str | None = None) -> None:
    for path in paths:
        if path.is_dir():
            client.log_artifacts(run_id, str(path), artifact_path=f"{folder}/{path.name}" if folder else path.name)
        elif path.exists():
            client.log_artifact(run_id, str(path), artifact_path=folder)


def set_tags(client: MlflowClient, run_id: str, tags: dict[str, str]) -> None:
    client.log_batch(run_id, tags=[RunTag(k, str(v)) for k, v in tags.items()])


def log_datasets(client: MlflowClient, run_id: str, digests: dict[str, str], context: str) -> None:
    """DVC-tracked paths as the run's datasets: name the path, digest its md5 as dvc.lock records it
    (at most 36 characters, MLflow's limit: an md5 with '.dir' fits), context 'input' or 'output'.
    MLflow keeps one dataset per (name, digest) in an experiment, so a stage's output and the next
    stage's input are the same dataset, as are the inputs of a stage's attempt and of its rerun."""
    datasets = [DatasetInput(Dataset(name=path, digest=md5, source_type="dvc", source=json.dumps({"path": path, "md5": md5})),
                             tags=[InputTag(MLFLOW_DATASET_CONTEXT, context)])
                for path, md5 in sorted(digests.items())]
    if datasets:
        client.log_inputs(run_id, datasets=datasets)


def verdict_counts(claims: dict) -> str:
    """'2 pass, 1 FAIL, 3 undecided' (words with no claim left out) for a claims.json document."""
    counts = Counter(status_word(c) for c in claims["claims"])
    return ", ".join(f"{counts[word]} {word}" for word in ("pass", "FAIL", "undecided") if counts[word]) or "no claims"


def _commit_line(tags: dict[str, str]) -> str:
    dirty = " with uncommitted changes" if tags.get("git_dirty") == "true" else ""
    return f"- commit `{tags.get('git_commit', 'unknown')[:12]}`{dirty}"


def stage_description(tags: dict[str, str], state: str, claims: dict | None = None, error: str | None = None) -> str:
    """A stage run's description: what ran (paper, stage, profile, state), on which commit and
    device, why it failed, and one line per claim of the claims.json it wrote."""
    lines = [f"**{tags['paper']} · {tags['stage']}** · profile `{tags['profile']}` · {state}", "", _commit_line(tags)]
    if tags.get("device", "unresolved") != "unresolved":
        lines.append(f"- device `{tags['device']}`")
    if error:
        lines.append(f"- error: {next((line for line in reversed(error.strip().splitlines()) if line.strip()), error)[:500]}")
    if claims is not None:
        lines += ["", f"Claims ({verdict_counts(claims)}):", ""]
        lines += [f"- **{cid}** {status}: ours {ours} vs threshold {threshold} ({statement})"
                  for _, cid, statement, _, ours, threshold, status in claims_rows(claims)]
    return "\n".join(lines)


def pipeline_description(tags: dict[str, str], stages: list[tuple[str, str]], verdicts: str | None) -> str:
    """A pipeline run's description: paper, profile, commit, the stages this invocation ran with
    their states, and the claims' verdict counts once a stage wrote them."""
    ran = ", ".join(f"{stage} ({state if state == 'FAILED' else state.lower()})" for stage, state in stages) or "none yet"
    lines = [f"**{tags['paper']} pipeline** · profile `{tags['profile']}`", "", _commit_line(tags), f"- stages run: {ran}"]
    if verdicts:
        lines.append(f"- claims: {verdicts}")
    return "\n".join(lines)


def describe_pipeline(client: MlflowClient, experiment: str, parent: str, order: list[str], claims: dict | None = None) -> None:
    """Rewrite the pipeline run's description from its stage runs (in `order`, dvc.yaml's) and, when
    the stage that just closed wrote `claims`, their verdict counts (kept as its tag 'claims')."""
    tags = dict(client.get_run(parent).data.tags)
    if claims is not None:
        tags["claims"] = verdict_counts(claims)
    children = client.search_runs([experiment], f"tags.`mlflow.parentRunId` = '{parent}' and tags.kind = 'stage'",
                                  max_results=1000)
    rank = {stage: i for i, stage in enumerate(order)}
    children.sort(key=lambda run: (rank.get(run.data.tags.get("stage"), len(rank)), run.info.start_time))
    stages = [(run.data.tags.get("stage", "?"), run.info.status) for run in children]
    updates = {NOTE: pipeline_description(tags, stages, tags.get("claims"))}
    if claims is not None:
        updates["claims"] = tags["claims"]
    set_tags(client, parent, updates)


def finish(client: MlflowClient, run_id: str, ok: bool) -> None:
    client.set_terminated(run_id, status=RunStatus.to_string(RunStatus.FINISHED if ok else RunStatus.FAILED))


def mark_parent(client: MlflowClient, parent: str, ok: bool) -> None:
    """A pipeline run reads FINISHED after each successful stage, FAILED for good once any fails."""
    if client.get_run(parent).info.status != "FAILED":
        finish(client, parent, ok)


def register_model(client: MlflowClient, run_id: str, name: str, path: Path, metrics: dict[str, float] | None = None) -> str:
    """Log `path` under models/<name> of the run and register it as a new version of `name`.

    The version carries what a user needs to judge it without opening the run: the profile it
    was trained under, the commit and dirty flag, the stage's inputs hash and the stage's metrics.
    """
    from mlflow.exceptions import MlflowException

    client.log_artifact(run_id, str(path), artifact_path=f"models/{name}")
    try:
        client.create_registered_model(name)
    except MlflowException:  # already registered: add a version
        pass
    run = client.get_run(run_id)
    tags = {key: run.data.tags[key] for key in ("profile", "git_commit", "git_dirty", "inputs_hash", "paper", "stage")
            if key in run.data.tags}
    tags |= {f"metric.{key}"[:250]: f"{value:.6g}" for key, value in sorted((metrics or {}).items())[:MAX_VERSION_METRICS]
             if isinstance(value, (int, float))}
    return client.create_model_version(name, f"{run.info.artifact_uri}/models/{name}", run_id, tags=tags).version


MAX_VERSION_METRICS = 40  # a model version's tags stay readable in the registry's table


def _model_version(client: MlflowClient, reference: str):
    """The version a reference names: `name` (latest), `name/3` or `name@alias`."""
    from mlflow.exceptions import MlflowException

    from tasks.core.inputs import InputError

    name, at, alias = reference.partition("@")
    name, slash, version = name.partition("/")
    if not name or (slash and not version.isdigit()) or (at and not alias):
        raise InputError(f"model reference {reference!r}: expected a file, NAME, NAME/VERSION or NAME@ALIAS")
    versions = client.search_model_versions(f"name = '{name}'")
    if not versions:
        raise InputError(f"model reference {reference!r}: no such file and no registered model named {name!r} "
                         f"(registered: {', '.join(sorted(m.name for m in client.search_registered_models())) or 'none'})")
    if at:
        try:
            return client.get_model_version_by_alias(name, alias)
        except MlflowException:
            aliases = sorted(a for a in (client.get_registered_model(name).aliases or {}))
            raise InputError(f"model reference {reference!r}: {name!r} has no alias {alias!r} "
                             f"(aliases: {', '.join(aliases) or 'none'})") from None
    numbers = sorted(int(v.version) for v in versions)
    if not version:
        return next(v for v in versions if int(v.version) == numbers[-1])
    chosen = next((v for v in versions if int(v.version) == int(version)), None)
    if chosen is None:
        raise InputError(f"model reference {reference!r}: {name!r} has no version {int(version)} (versions: {numbers})")
    return chosen


def resolve_model(reference: str, destination: Path, root: Path | None = None) -> Path:
    """A model file from a user's reference: a path, or a registered model `name`, `name/3`, `name@alias`: from
    this checkout's MLflow store, else (a bare name the store lacks) the clone's committed default
    (tasks/core/default_models.py). Which model it used, with its profile and commit, goes to stderr."""
    import sys

    from tasks.core.default_models import committed_default
    from tasks.core.inputs import InputError

    path = Path(reference)
    if path.is_file():
        return path
    root = root or Path(os.environ.get("PAPERS_ROOT") or Path.cwd())
    default = committed_default(root, reference)
    if os.environ.get("MLFLOW_TRACKING_URI") or (root / "mlflow" / "mlflow.db").exists():
        client = client_for(root)
        try:
            return _download_version(client, _model_version(client, reference), reference, destination)
        except InputError:
            if default is None:
                raise
    elif default is None:
        raise InputError(f"model reference {reference!r}: no such file, no MLflow store at {root / 'mlflow'} to look "
                         "it up in (nothing has been trained here yet), and no committed default of that name")
    print(f"model: {default.describe(root)}", file=sys.stderr)
    return default.path


def _download_version(client: MlflowClient, chosen, reference: str, destination: Path) -> Path:
    """The file of a registered version, after saying on stderr which one it is (a smoke version is a toy)."""
    import sys

    tags = chosen.tags or {}
    toy = (f" (a toy run: `papers run {tags.get('paper', '<paper>')} --profile default` trains a real one)"
           if tags.get("profile") == "smoke" else "")
    print(f"model: {chosen.name} version {chosen.version} of this checkout's MLflow store (profile "
          f"{tags.get('profile', '?')}, commit {tags.get('git_commit', '?')[:10]}){toy}", file=sys.stderr)
    folder = Path(client.download_artifacts(chosen.run_id, f"models/{chosen.name}", str(destination)))
    files = [p for p in sorted(folder.rglob("*")) if p.is_file()]
    if not files:
        from tasks.core.inputs import InputError

        raise InputError(f"model reference {reference!r}: version {chosen.version} has no file in its run's artifacts")
    return files[0]
