"""Model references a user types: a file, `name`, `name/3`, `name@alias`; versions carry their provenance."""
from __future__ import annotations

import pytest

from tasks.core import tracking
from tasks.core.inputs import InputError


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A real MLflow store with model `stopper` in two versions (v2 trained under smoke, aliased `champion`)."""
    root = tmp_path_factory.mktemp("store")
    client = tracking.client_for(root)
    experiment = tracking.experiment_id(client, "paper", root)
    for version, profile in ((1, "default"), (2, "smoke")):
        run = client.create_run(experiment, tags={"profile": profile, "git_commit": f"c{version}", "git_dirty": "false",
                                                  "inputs_hash": f"h{version}", "paper": "paper", "stage": "train"})
        model = root / f"model-v{version}.pt"
        model.write_text(f"weights {version}")
        tracking.register_model(client, run.info.run_id, "stopper", model, {"loss": 0.5 / version, "note": "text"})
    client.set_registered_model_alias("stopper", "champion", "2")
    return root


def resolve(store, reference, tmp_path):
    return tracking.resolve_model(reference, tmp_path, root=store).read_text()


@pytest.mark.parametrize("reference, content", [("stopper", "weights 2"), ("stopper/1", "weights 1"),
                                                ("stopper/2", "weights 2"), ("stopper@champion", "weights 2")])
def test_name_version_and_alias_resolve(store, tmp_path, reference, content):
    assert resolve(store, reference, tmp_path) == content


@pytest.mark.parametrize("reference, says", [
    ("stopper/9", "'stopper' has no version 9 (versions: [1, 2])"),
    ("stopper@nope", "'stopper' has no alias 'nope' (aliases: champion)"),
    ("nothing", "no registered model named 'nothing' (registered: stopper)"),
    ("stopper/x", "expected a file, NAME, NAME/VERSION or NAME@ALIAS"),
])
def test_a_bad_reference_names_what_exists(store, tmp_path, reference, says):
    with pytest.raises(InputError, match=None) as raised:
        resolve(store, reference, tmp_path)
    assert says in str(raised.value)


def test_versions_carry_profile_commit_inputs_and_metrics_and_smoke_is_announced(store, tmp_path, capsys):
    client = tracking.client_for(store)
    tags = client.get_model_version("stopper", "1").tags
    assert tags["profile"] == "default" and tags["git_commit"] == "c1" and tags["git_dirty"] == "false"
    assert tags["inputs_hash"] == "h1" and tags["metric.loss"] == "0.5" and "metric.note" not in tags
    resolve(store, "stopper/1", tmp_path)
    assert "smoke" not in capsys.readouterr().err
    resolve(store, "stopper@champion", tmp_path)
    assert "stopper version 2 was trained under the smoke profile" in capsys.readouterr().err


def test_a_file_path_is_taken_as_is(store, tmp_path):
    model = tmp_path / "mine.pt"
    model.write_text("mine")
    assert tracking.resolve_model(str(model), tmp_path, root=store) == model


def test_a_name_without_any_store_is_refused_without_creating_one(tmp_path, monkeypatch):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    with pytest.raises(InputError, match="no MLflow store at"):
        tracking.resolve_model("stopper", tmp_path, root=tmp_path)
    assert not (tmp_path / "mlflow").exists()
