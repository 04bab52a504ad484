"""MLflow bookkeeping against a real (throwaway) store: parent/child runs, a new run per attempt, and what
a user browses (experiment kind, run descriptions, DVC inputs as datasets, claims.json naming its run)."""
from __future__ import annotations

import json

import pytest
import yaml

from tasks.core import tracking
from tasks.core.claims import claims_rows
from tests.conftest import dvc, papers_by_size, smoke_copy


def make_client(tmp_path):
    (tmp_path / ".dvc").mkdir()
    client = tracking.client_for(tmp_path)
    return client, tracking.experiment_id(client, "paper", tmp_path)


TAGS = {"paper": "paper", "stage": "solve", "profile": "smoke"}


def test_a_rerun_on_the_same_inputs_opens_a_new_stage_run_and_leaves_the_first_as_it_ended(tmp_path, monkeypatch):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    client, experiment = make_client(tmp_path)
    runs = []
    for invocation, curve in (("first", [3.0, 2.0, 1.0]), ("second", [4.0, 0.5])):
        parent = tracking.parent_run(client, experiment, invocation, TAGS)
        run_id, started = tracking.stage_run(client, experiment, parent, "hash-1", TAGS)
        tracking.log_curve(client, run_id, "loss", curve, started)
        tracking.finish(client, run_id, ok=True)
        tracking.mark_parent(client, parent, ok=True)
        runs.append((parent, run_id, client.get_run(run_id).info))
    assert runs[0][1] != runs[1][1], "each attempt at the stage gets a run of its own"
    assert runs[0][0] != runs[1][0], "each invocation gets its own parent run"
    first, ended = client.get_run(runs[0][1]).info, runs[0][2]
    assert (first.status, first.start_time, first.end_time) == ("FINISHED", ended.start_time, ended.end_time)
    assert [(m.step, m.value) for m in client.get_metric_history(runs[0][1], "loss")] == [(0, 3.0), (1, 2.0), (2, 1.0)]
    assert [(m.step, m.value) for m in client.get_metric_history(runs[1][1], "loss")] == [(0, 4.0), (1, 0.5)]
    for parent, run_id, _ in runs:
        run = client.get_run(run_id)
        assert run.data.tags["mlflow.parentRunId"] == parent and run.data.tags["inputs_hash"] == "hash-1"
        assert run.data.tags["kind"] == "stage" and run.data.tags["mlflow.runName"] == "paper-solve"


def test_a_failed_stage_marks_its_parent_failed_for_good(tmp_path, monkeypatch):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    client, experiment = make_client(tmp_path)
    parent = tracking.parent_run(client, experiment, "inv", TAGS)
    run_id, _ = tracking.stage_run(client, experiment, parent, "h", TAGS)
    tracking.finish(client, run_id, ok=False)
    tracking.mark_parent(client, parent, ok=False)
    tracking.mark_parent(client, parent, ok=True)
    assert client.get_run(run_id).info.status == "FAILED"
    assert client.get_run(parent).info.status == "FAILED"


@pytest.mark.parametrize("mid_request", [False, pytest.param(True, marks=pytest.mark.heavy)])  # a companion each: ~8 s
def test_companion_marks_the_run_failed_when_the_stage_process_vanishes(tmp_path, monkeypatch, mid_request):
    from stages.tracking import Tracker
    from tasks.core.messages import frame

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    client, experiment = make_client(tmp_path)
    tracker = Tracker(tmp_path)
    tracker.open("paper", "inv", "h", TAGS)
    tracker.metrics({"x": 1.0})
    if mid_request:  # killed while writing a request: half a frame, then the end
        tracker.process.stdin.write(frame({"op": "metrics", "metrics": {"y": 2.0}})[:10])
    tracker.process.stdin.close()  # as if the stage process had been killed
    assert tracker.process.wait(timeout=60) == 1
    run = client.search_runs([experiment], "tags.kind = 'stage'")[0]
    assert run.info.status == "FAILED" and "without closing" in run.data.tags["error"]
    assert run.data.metrics["x"] == 1.0


@pytest.mark.heavy  # a companion process: ~3 s (the mid_request=False case above stays)
def test_companion_closes_the_run_and_reports_its_id(tmp_path, monkeypatch):
    from stages.tracking import Tracker

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    client, _ = make_client(tmp_path)
    tracker = Tracker(tmp_path)
    tracker.open("paper", "inv", "h", TAGS)
    tracker.params({"a": {"b": 1}})
    tracker.curve("loss", [2.0, 1.0])
    tracker.curve("sparse", [(1, 5.0), (10, 4.0)])
    opened = tracker.run_id(timeout=60)
    answer = tracker.close(ok=True)
    assert opened == answer["run_id"]
    run = client.get_run(answer["run_id"])
    assert run.info.status == "FINISHED" and run.data.params == {"a.b": "1"}
    assert [m.value for m in client.get_metric_history(run.info.run_id, "loss")] == [2.0, 1.0]
    assert [(m.step, m.value) for m in client.get_metric_history(run.info.run_id, "sparse")] == [(1, 5.0), (10, 4.0)]
    assert client.get_run(answer["parent_id"]).info.status == "FINISHED"


def test_an_existing_experiment_without_a_kind_is_marked_model_development(tmp_path, monkeypatch):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    (tmp_path / ".dvc").mkdir()
    client = tracking.client_for(tmp_path)
    old = client.create_experiment("paper", artifact_location=(tmp_path / "artifacts").as_uri())  # made before the tag
    assert tracking.experiment_id(client, "paper", tmp_path) == old
    assert client.get_experiment(old).tags[tracking.EXPERIMENT_KIND] == tracking.MODEL_DEVELOPMENT
    client.set_experiment_tag(old, tracking.EXPERIMENT_KIND, "genai_development")  # a user's explicit choice stays
    tracking.experiment_id(client, "paper", tmp_path)
    assert client.get_experiment(old).tags[tracking.EXPERIMENT_KIND] == "genai_development"


# One real smoke pipeline of the cheapest paper, shared by the tests below (CI time).

PAPER, DECLARED = next(iter(papers_by_size().items()))
FIRST = DECLARED.stages[0]
CLAIMS = next(stage for stage in DECLARED.stages if stage.claims)


@pytest.fixture(scope="module")
def smoke(tmp_path_factory, prefect_server):
    """(copy, client, runs by stage, pipeline run, dvc.lock stages) after `dvc repro` of PAPER's smoke pipeline."""
    from mlflow.tracking import MlflowClient

    copy = smoke_copy(tmp_path_factory.mktemp("tracking") / "repo")
    dvc(copy, "repro", f"stages/{PAPER}/dvc.yaml", timeout=900)
    client = MlflowClient(tracking_uri=f"sqlite:///{copy / 'mlflow' / 'mlflow.db'}")
    experiment = client.get_experiment_by_name(PAPER)
    runs = [client.get_run(r.info.run_id) for r in client.search_runs([experiment.experiment_id], max_results=100)]
    stages = {r.data.tags["stage"]: r for r in runs if r.data.tags.get("kind") == "stage"}
    [pipeline] = [r for r in runs if r.data.tags.get("kind") == "pipeline"]
    lock = yaml.safe_load((copy / "stages" / PAPER / "dvc.lock").read_text())["stages"]
    return copy, experiment, stages, pipeline, lock


@pytest.mark.integration
def test_smoke_experiment_is_model_development(smoke):
    _, experiment, _, _, _ = smoke
    assert experiment.tags[tracking.EXPERIMENT_KIND] == tracking.MODEL_DEVELOPMENT


@pytest.mark.integration
def test_smoke_runs_describe_what_ran_and_the_claims(smoke):
    copy, _, stages, pipeline, _ = smoke
    claims = json.loads((copy / "data" / PAPER / "claims.json").read_text())
    evaluate = stages[CLAIMS.name].data.tags
    note = evaluate[tracking.NOTE]
    assert note.startswith(f"**{PAPER} · {CLAIMS.name}** · profile `smoke` · finished")
    assert f"commit `{evaluate['git_commit'][:12]}`" in note
    for _, cid, _, _, ours, threshold, status in claims_rows(claims):
        assert status == "undecided" and f"- **{cid}** undecided: ours {ours} vs threshold {threshold}" in note
    assert "Claims" not in stages[FIRST.name].data.tags[tracking.NOTE]
    described = pipeline.data.tags[tracking.NOTE]
    assert described.startswith(f"**{PAPER} pipeline** · profile `smoke`")
    assert "stages run: " + ", ".join(f"{stage.name} (finished)" for stage in DECLARED.stages) in described
    verdicts = f"{len(claims['claims'])} undecided"
    assert f"claims: {verdicts}" in described and pipeline.data.tags["claims"] == verdicts


def _datasets(run, context: str) -> dict[str, str]:
    return {d.dataset.name: d.dataset.digest for d in run.inputs.dataset_inputs
            if any(t.key == "mlflow.data.context" and t.value == context for t in d.tags)}


@pytest.mark.integration
def test_smoke_runs_list_their_dvc_data_as_datasets(smoke):
    copy, _, stages, _, lock = smoke
    for stage, run in stages.items():
        locked = lock[f"{PAPER}-{stage}"]
        deps = {d["path"]: d["md5"] for d in locked["deps"] if d["path"].startswith("data/")}
        assert _datasets(run, "input") == deps, stage
        assert all(run.data.tags[f"dvc.dep.{path}"] == md5 for path, md5 in deps.items())
        outs = {o["path"]: o["md5"] for o in locked["outs"]}
        assert _datasets(run, "output") == outs, stage
    for stage in DECLARED.stages:  # a folder's digest is DVC's, of its listing
        for name in stage.inputs:
            path = f"data/{PAPER}/{name}"
            assert _datasets(stages[stage.name], "input")[path].endswith(".dir") == (copy / path).is_dir(), path
    path = f"data/{PAPER}/{CLAIMS.inputs[0]}"
    source = next(d.dataset for d in stages[CLAIMS.name].inputs.dataset_inputs if d.dataset.name == path)
    assert source.source_type == "dvc" and json.loads(source.source) == {"path": path, "md5": source.digest}


@pytest.mark.integration
def test_smoke_claims_name_their_mlflow_run_and_dirty_flag(smoke):
    copy, _, stages, _, _ = smoke
    claims = json.loads((copy / "data" / PAPER / "claims.json").read_text())
    evaluate = stages[CLAIMS.name]
    assert claims["mlflow_run_id"] == evaluate.info.run_id
    assert claims["git_dirty"] is (evaluate.data.tags["git_dirty"] == "true")
    assert list(claims) == ["paper", "profile", "commit", "git_dirty", "mlflow_run_id", "claims"]
