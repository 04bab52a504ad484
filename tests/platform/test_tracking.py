"""MLflow bookkeeping against a real (throwaway) store: parent/child runs, reuse by input hash."""
from tasks.core import tracking


def make_client(tmp_path):
    (tmp_path / ".dvc").mkdir()
    client = tracking.client_for(tmp_path)
    return client, tracking.experiment_id(client, "paper", tmp_path)


TAGS = {"paper": "paper", "stage": "solve", "profile": "smoke"}


def test_rerun_on_same_inputs_reuses_the_stage_run_without_duplicate_metrics(tmp_path, monkeypatch):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    client, experiment = make_client(tmp_path)
    runs = []
    for invocation in ("first", "second"):
        parent = tracking.parent_run(client, experiment, invocation, TAGS)
        run_id, started = tracking.stage_run(client, experiment, parent, "hash-1", TAGS)
        tracking.log_curve(client, run_id, "loss", [3.0, 2.0, 1.0], started)
        tracking.finish(client, run_id, ok=True)
        tracking.mark_parent(client, parent, ok=True)
        runs.append((parent, run_id))
    assert runs[0][1] == runs[1][1], "same inputs hash must find the same stage run"
    assert runs[0][0] != runs[1][0], "each invocation gets its own parent run"
    history = client.get_metric_history(runs[1][1], "loss")
    assert [(m.step, m.value) for m in history] == [(0, 3.0), (1, 2.0), (2, 1.0)]
    run = client.get_run(runs[1][1])
    assert run.info.status == "FINISHED" and run.data.tags["mlflow.parentRunId"] == runs[1][0]
    other, _ = tracking.stage_run(client, experiment, runs[1][0], "hash-2", TAGS)
    assert other != runs[1][1]


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


def test_companion_marks_the_run_failed_when_the_stage_process_vanishes(tmp_path, monkeypatch):
    from stages.tracker import Tracker

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    client, experiment = make_client(tmp_path)
    tracker = Tracker(tmp_path)
    tracker.open("paper", "inv", "h", TAGS)
    tracker.metrics({"x": 1.0})
    tracker.process.stdin.close()  # as if the stage process had been killed
    assert tracker.process.wait(timeout=60) == 1
    run = client.search_runs([experiment], "tags.kind = 'stage'")[0]
    assert run.info.status == "FAILED" and "without closing" in run.data.tags["error"]
    assert run.data.metrics["x"] == 1.0


def test_companion_closes_the_run_and_reports_its_id(tmp_path, monkeypatch):
    from stages.tracker import Tracker

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    client, _ = make_client(tmp_path)
    tracker = Tracker(tmp_path)
    tracker.open("paper", "inv", "h", TAGS)
    tracker.params({"a": {"b": 1}})
    tracker.curve("loss", [2.0, 1.0])
    tracker.curve("sparse", [(1, 5.0), (10, 4.0)])
    answer = tracker.close(ok=True)
    run = client.get_run(answer["run_id"])
    assert run.info.status == "FINISHED" and run.data.params == {"a.b": "1"}
    assert [m.value for m in client.get_metric_history(run.info.run_id, "loss")] == [2.0, 1.0]
    assert [(m.step, m.value) for m in client.get_metric_history(run.info.run_id, "sparse")] == [(1, 5.0), (10, 4.0)]
    assert client.get_run(answer["parent_id"]).info.status == "FINISHED"
