"""Surrogate training on a tiny real LBM data set (spec §10 Surrogate, §6.2): the data-folder reader
(flows/unidrag/dataset.py) and standardizer, deterministic training of the kinds (surrogates.py),
save/load round trip, predict_cd's gradient for the shape optimiser, metric definitions, the GBT
baseline and config validation."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from flows.unidrag.dataset import DatasetFiles, load_samples
from flows.unidrag.surrogates import MPL_KINDS, build_model, load_surrogate
from tasks.cfd.engines import run_lbm
from tasks.cfd.lbm_setup import LBMSetup
from tasks.cfd.surrogate.gbt import fit_gbt
from tasks.cfd.surrogate.samples import Standardizer, select
from tasks.cfd.surrogate.training import TrainConfig, metrics, predict, predict_cd, train_surrogate
from tasks.cfd.vehicle_dataset import Placement, labels, splits, tunnel_body
from tasks.cfd.vehicles import sample_family

TINY = {"d": 16, "blocks": 1, "heads": 2, "slices": 4, "experts": 2, "top_k": 2, "steps": 4, "batch": 2,
        "surface_points": 24, "volume_points": 32, "profile_bins": 8}


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """The generate stage's layout (shapes/, labels/, splits.json) for 8 vehicles on a short smoke-grid run."""
    folder = tmp_path_factory.mktemp("unidrag")
    (folder / "shapes").mkdir()
    (folder / "labels").mkdir()
    family, placement = sample_family(2, seed=0), Placement(16, 16.0)
    result = run_lbm(LBMSetup(grid=(80, 33), tau=0.577, steps=120, average_steps=40, ramp_steps=40, profile_bins=8),
                     [tunnel_body(v, placement) for v in family])
    for i, vehicle in enumerate(family):
        contour, _ = vehicle.contour(256)
        np.savez(folder / "shapes" / f"{i:05d}.npz", body_type=vehicle.body_type, params=vehicle.vector(), contour=contour)
        np.savez(folder / "labels" / f"{i:05d}.npz", **labels(result, i, vehicle, placement, 32, 48, seed=i))
    split = splits([v.body_type for v in family], {"train": 1, "test": 1}, seed=0)
    (folder / "splits.json").write_text(json.dumps(split))
    samples, split = load_samples(DatasetFiles.under(folder))
    train = select(samples, split["train"])
    return train, select(samples, split["test"]), Standardizer.fit(train)


def test_samples_and_standardizer(data):
    train, test, standardizer = data
    sample = test[0]
    assert sample.volume_target.shape == (48, 3) and sample.surface_cp.shape == (32,) and sample.params.shape == (16,)
    assert sample.profile[-1] == pytest.approx(sample.cd, rel=1e-6)
    z = standardizer.standardized(sample)
    back = standardizer.physical({k: torch.as_tensor(v)[None] for k, v in z.items()})
    np.testing.assert_allclose(back["volume"][0].numpy(), sample.volume_target, atol=1e-9)
    np.testing.assert_allclose(back["profile"][0].numpy(), sample.profile, atol=1e-9)
    assert float(standardizer.profile_end_in_cd_units(torch.tensor(z["profile"][-1]))) == pytest.approx(float(z["cd"]))
    restored = Standardizer.from_dict(json.loads(json.dumps(standardizer.to_dict())))
    np.testing.assert_array_equal(restored.profile_mean, standardizer.profile_mean)
    assert restored.cd_std == standardizer.cd_std
    with pytest.raises(KeyError, match="indices"):
        select(train, [999])


@pytest.mark.parametrize("kind", ["unidrag", "transolver"])
def test_training_is_deterministic(data, kind):
    train, test, standardizer = data
    config = TrainConfig(kind=kind, mpl=kind in MPL_KINDS, **TINY)
    first, second = (train_surrogate(config, build_model, train, test, standardizer) for _ in range(2))
    assert first.history["loss"] == second.history["loss"] and len(first.history["loss"]) == config.steps
    assert np.isfinite(first.history["loss"]).all()
    if kind == "unidrag":
        assert len(first.history["gate_usage"]) == config.steps
        assert all(0 <= r <= 1 for r in first.history["conflict_rate"])
    assert first.history["val"] == second.history["val"]


def test_save_load_round_trip_and_predict_cd_gradient(data, tmp_path):
    train, test, standardizer = data
    trained = train_surrogate(TrainConfig(kind="unidrag", mpl=True, **TINY), build_model, train, [], standardizer)
    loaded = load_surrogate(trained.save(tmp_path / "model.pt"))
    assert loaded.config == trained.config and loaded.history == trained.history
    for a, b in zip(predict(trained, test), predict(loaded, test)):
        assert a["cd"] == b["cd"]
        np.testing.assert_array_equal(a["volume"], b["volume"])
    sample = test[0]
    points = torch.as_tensor(sample.surface_points).requires_grad_()
    volume = torch.as_tensor(sample.volume_points).requires_grad_()
    cd = predict_cd(loaded, points, torch.as_tensor(sample.surface_normals), volume, torch.as_tensor(sample.contour))
    assert cd.dim() == 0 and float(cd.detach()) == pytest.approx(predict(loaded, [sample])[0]["cd"], rel=1e-5)
    cd.backward()
    for t in (points, volume):
        assert torch.isfinite(t.grad).all() and t.grad.abs().sum() > 0


def test_metrics_of_perfect_and_of_mean_predictions(data):
    _, test, _ = data
    perfect = [{"cd": s.cd, "profile": s.profile, "surface_cp": s.surface_cp, "volume": s.volume_target} for s in test]
    assert metrics(perfect, test) == {"r2_cd": 1.0, "surface_cp_rel_l2": 0.0, "volume_rel_l2": 0.0, "profile_mae": 0.0}
    mean_cd = float(np.mean([s.cd for s in test]))
    assert metrics([p | {"cd": mean_cd} for p in perfect], test)["r2_cd"] == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError, match="predictions"):
        metrics(perfect[:1], test)


def test_gbt_baseline_predicts_finite_cd(data):
    train, test, _ = data
    predicted = fit_gbt(train, seed=0).predict_cd(test)
    assert predicted.shape == (len(test),) and np.isfinite(predicted).all()


@pytest.mark.parametrize("field, value", [("heads", 3), ("top_k", 5), ("steps", 0), ("pcgrad_scope", "heads"),
                                          ("lr", 0.0)])
def test_config_names_the_bad_field(field, value):
    with pytest.raises(ValueError, match=field):
        TrainConfig(**{"kind": "unidrag", **TINY, field: value})


def test_an_unknown_kind_is_named():
    with pytest.raises(ValueError, match="kind"):
        build_model(TrainConfig(kind="resnet", **TINY))


def test_early_stopping_keeps_the_best_evaluated_weights(data):
    """Validation R^2 every 2 steps: the curve is recorded, training stops after `patience`
    evaluations without a new best, and the kept weights score the curve's best R^2."""
    train, test, standardizer = data
    config = TrainConfig(kind="transolver", **(TINY | {"steps": 12}), eval_every=2, patience=1)
    trained = train_surrogate(config, build_model, train, test, standardizer)
    history = trained.history
    steps, scores = zip(*history["val_curve"])
    assert steps == tuple(range(2, 2 * len(steps) + 1, 2)) and history["steps_run"] == steps[-1]
    assert history["best_step"] == steps[int(np.argmax(scores))]
    assert history["val"]["r2_cd"] == pytest.approx(max(scores), abs=1e-9)
    if history["steps_run"] < 12:  # stopped early: the last evaluation did not improve
        assert scores[-1] <= max(scores[:-1])
