"""MLflow bookkeeping for stage runs (the one task-library module that may import mlflow).

Layout: one experiment per paper; a parent run per pipeline invocation; a child run per stage,
found again by the hash of the stage's inputs so that a rerun on the same inputs reuses its run
instead of adding a duplicate. Everything goes through MlflowClient with explicit run ids,
because MLflow's active run is per thread and Prefect tasks run on other threads.
"""
from __future__ import annotations

import os
from pathlib import Path

from mlflow.entities import Metric, Param, RunStatus, RunTag
from mlflow.tracking import MlflowClient

MAX_BATCH = 1000  # MLflow's log_batch limit on metrics per call


def tracking_uri(root: Path) -> str:
    """MLFLOW_TRACKING_URI alone selects a server; else the embedded store under mlflow/.

    Absolute paths: `dvc exp run --temp` runs in a copy of the repo, where a relative path
    would silently start a second store.
    """
    return os.environ.get("MLFLOW_TRACKING_URI") or f"sqlite:///{(root / 'mlflow' / 'mlflow.db').resolve()}"


def client_for(root: Path) -> MlflowClient:
    (root / "mlflow").mkdir(exist_ok=True)
    return MlflowClient(tracking_uri=tracking_uri(root))


def experiment_id(client: MlflowClient, paper: str, root: Path) -> str:
    experiment = client.get_experiment_by_name(paper)
    if experiment is not None:
        return experiment.experiment_id
    artifacts = (root / "mlflow" / "artifacts" / paper).resolve().as_uri()
    return client.create_experiment(paper, artifact_location=artifacts)


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
    """(run id, start time in ms) of the stage run for these inputs; reused when it exists.

    Metrics are logged with the run's start time as timestamp, so a rerun on the same inputs
    (same numbers, by determinism) writes rows MLflow already holds and adds no duplicates.
    """
    found = _find(client, experiment, inputs_hash=inputs_hash, stage=tags["stage"], kind="stage")
    if found is not None:
        run_id = found.info.run_id
        client.update_run(run_id, status="RUNNING")
        start = found.info.start_time
    else:
        run = client.create_run(experiment, tags={**tags, "mlflow.runName": f"{tags['paper']}-{tags['stage']}"})
        run_id, start = run.info.run_id, run.info.start_time
    client.log_batch(run_id, tags=[RunTag(k, str(v)) for k, v in {**tags, "mlflow.parentRunId": parent,
                                                                     "inputs_hash": inputs_hash, "kind": "stage"}.items()])
    return run_id, start


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


def finish(client: MlflowClient, run_id: str, ok: bool) -> None:
    client.set_terminated(run_id, status=RunStatus.to_string(RunStatus.FINISHED if ok else RunStatus.FAILED))


def mark_parent(client: MlflowClient, parent: str, ok: bool) -> None:
    """A pipeline run reads FINISHED after each successful stage, FAILED for good once any fails."""
    if client.get_run(parent).info.status != "FAILED":
        finish(client, parent, ok)


def register_model(client: MlflowClient, run_id: str, name: str, path: Path) -> str:
    """Log `path` under models/<name> of the run and register it as a new version of `name`."""
    from mlflow.exceptions import MlflowException

    client.log_artifact(run_id, str(path), artifact_path=f"models/{name}")
    try:
        client.create_registered_model(name)
    except MlflowException:  # already registered: add a version
        pass
    source = f"{client.get_run(run_id).info.artifact_uri}/models/{name}"
    return client.create_model_version(name, source, run_id).version


def registered_model_file(client: MlflowClient, reference: str, destination: Path) -> Path:
    """Download the file of a registered model, `name` (latest version) or `name/version`."""
    name, _, version = reference.partition("/")
    versions = client.search_model_versions(f"name = '{name}'")
    if not versions:
        raise FileNotFoundError(f"no file and no registered model named {name!r}")
    chosen = max(versions, key=lambda v: int(v.version)) if not version else next(
        (v for v in versions if v.version == version), None)
    if chosen is None:
        raise FileNotFoundError(f"registered model {name!r} has no version {version!r} (versions: "
                                f"{sorted(int(v.version) for v in versions)})")
    folder = Path(client.download_artifacts(chosen.run_id, f"models/{name}", str(destination)))
    return next(p for p in sorted(folder.rglob("*")) if p.is_file())
