"""Model references a user types: a file, `name`, `name/3`, `name@alias`; versions carry their provenance."""
from __future__ import annotations

import pytest

from tasks.core import tracking
from tasks.core.default_models import committed_default, write_default_models
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
    said = capsys.readouterr().err
    assert "model: stopper version 1 of this checkout's MLflow store (profile default, commit c1)" in said
    assert "toy" not in said
    resolve(store, "stopper@champion", tmp_path)
    assert "stopper version 2 of this checkout's MLflow store (profile smoke, commit c2) (a toy run" in capsys.readouterr().err


def test_a_file_path_is_taken_as_is(store, tmp_path):
    model = tmp_path / "mine.pt"
    model.write_text("mine")
    assert tracking.resolve_model(str(model), tmp_path, root=store) == model


def test_a_name_without_any_store_is_refused_without_creating_one(tmp_path, monkeypatch):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    with pytest.raises(InputError, match="no MLflow store at .* and no committed default of that name"):
        tracking.resolve_model("stopper", tmp_path, root=tmp_path)
    assert not (tmp_path / "mlflow").exists()


def commit_default(root, name: str, content: str, profile: str = "default") -> None:
    paper = name.partition("-")[0]
    model = root / "trained.pt"
    model.write_text(content)
    write_default_models(root / "data" / paper / "default_models", paper, {name: model}, profile, "a" * 40, False, "r1")


def test_a_clone_without_a_store_uses_the_committed_default_and_says_so(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    commit_default(tmp_path, "paper-net", "committed weights")
    path = tracking.resolve_model("paper-net", tmp_path / "out", root=tmp_path)
    assert path == tmp_path / "data" / "paper" / "default_models" / "paper-net.pt"
    assert path.read_text() == "committed weights"
    assert ("model: the committed default paper-net (data/paper/default_models/paper-net.pt: profile default, commit "
            "aaaaaaaaaa)") in capsys.readouterr().err
    assert not (tmp_path / "mlflow").exists()


def test_the_store_wins_over_the_committed_default_and_a_name_it_lacks_falls_back(store, tmp_path, capsys):
    commit_default(store, "stopper-x", "x", profile="smoke")  # a paper named `stopper`, not in the registry
    assert resolve(store, "stopper-x", tmp_path) == "x"
    assert "the committed default stopper-x" in capsys.readouterr().err
    assert resolve(store, "stopper", tmp_path) == "weights 2"  # registered: the store's version


def test_a_committed_default_that_does_not_match_its_provenance_is_not_used(tmp_path, monkeypatch):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    commit_default(tmp_path, "paper-net", "committed weights")
    (tmp_path / "data" / "paper" / "default_models" / "paper-net.pt").write_text("tampered")
    assert committed_default(tmp_path, "paper-net") is None
    with pytest.raises(InputError, match="no committed default"):
        tracking.resolve_model("paper-net", tmp_path / "out", root=tmp_path)
    assert committed_default(tmp_path, "../etc") is None and committed_default(tmp_path, "paper-net/1") is None
