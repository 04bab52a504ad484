"""Spec §10.4, 10.6, 10.7: lam = 0 is CE bit for bit, the SVM never sees test features, same seed same numbers;
and the saved model round trip."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from flows.ddsvm import training
from flows.ddsvm.model import Architecture
from flows.ddsvm.model_io import load_model, save_model
from flows.ddsvm.training import TrainConfig, predict, train_network
from tasks.core.inputs import InputError
from tasks.train.few_shot import digit_images, per_class_split

ARCH = Architecture("conv", (1, 8, 8), 16, 10, width=4)


@pytest.fixture(scope="module")
def split():
    x, y = digit_images()
    train, test = per_class_split(y, 3, seed=0)
    return torch.from_numpy(x[train]), torch.from_numpy(y[train]), torch.from_numpy(x[test[:200]])


def same_weights(a, b) -> bool:
    return all(torch.equal(p, q) for p, q in zip(a.state_dict().values(), b.state_dict().values()))


def test_lambda_zero_is_ce_bit_for_bit(split):
    x, y, _ = split
    ce = train_network(x, y, ARCH, TrainConfig("ce", epochs=4), seed=5)
    ddsvm = train_network(x, y, ARCH, TrainConfig("ddsvm", epochs=4, lam=0.0), seed=5)
    assert same_weights(ce.network, ddsvm.network)
    assert "margin_min" in ddsvm.log[0] and "margin_min" not in ce.log[0]  # the SVM was refitted all along
    pushed = train_network(x, y, ARCH, TrainConfig("ddsvm", epochs=4), seed=5)
    assert not same_weights(ce.network, pushed.network) and pushed.log[-1]["push"] > 0


def test_same_seed_same_numbers(split):
    x, y, test = split
    runs = [train_network(x, y, ARCH, TrainConfig("ddsvm", epochs=3), seed=1) for _ in range(2)]
    assert same_weights(runs[0].network, runs[1].network)
    np.testing.assert_array_equal(runs[0].svm.weights, runs[1].svm.weights)
    for readout in ("head", "svm"):
        np.testing.assert_array_equal(predict(runs[0].network, runs[0].svm, test)[readout],
                                      predict(runs[1].network, runs[1].svm, test)[readout])


def test_svm_is_fitted_on_training_features_only(split, monkeypatch):
    x, y, _ = split
    seen = []
    real = training.fit_ovr_svm
    monkeypatch.setattr(training, "fit_ovr_svm", lambda u, *a, **k: seen.append(len(u)) or real(u, *a, **k))
    train_network(x, y, ARCH, TrainConfig("ddsvm", epochs=3, refit_every=2), seed=0)
    assert seen == [len(x)] * 3  # refits at epochs 0 and 2, then the read-out SVM


def test_cosine_head_and_wrong_pairing(split):
    x, y, _ = split
    run = train_network(x, y, Architecture("conv", (1, 8, 8), 16, 10, head="cosine", width=4), TrainConfig("cosine", epochs=2), 0)
    assert np.isfinite(run.log[-1]["loss"])
    with pytest.raises(ValueError, match="needs the 'cosine' head"):
        train_network(x, y, ARCH, TrainConfig("cosine", epochs=1), 0)


def test_model_file_round_trip(split, tmp_path):
    x, y, test = split
    run = train_network(x, y, ARCH, TrainConfig("ddsvm", epochs=2), seed=0)
    path = save_model(tmp_path / "m.safetensors", run.network, run.svm, {"mean": np.arange(3.0)}, {"classes": ["a"]})
    saved = load_model(path)
    assert same_weights(saved.network, run.network) and saved.info == {"classes": ["a"]}
    np.testing.assert_array_equal(saved.svm.weights, run.svm.weights)
    np.testing.assert_array_equal(saved.arrays["mean"], np.arange(3.0))
    for readout in ("head", "svm"):
        np.testing.assert_array_equal(predict(saved.network, saved.svm, test)[readout],
                                      predict(run.network, run.svm, test)[readout])
    from safetensors.torch import save_file

    save_file({"w": torch.zeros(2)}, str(tmp_path / "junk.safetensors"), metadata={"format": "pt"})
    with pytest.raises(InputError, match="not a ddsvm model"):
        load_model(tmp_path / "junk.safetensors")
    (tmp_path / "text.safetensors").write_text("hello")
    with pytest.raises(InputError, match="not a safetensors file"):
        load_model(tmp_path / "text.safetensors")


def test_networks_built_in_threads_at_once_equal_those_built_one_at_a_time():
    """The thread task runner builds networks concurrently: each still gets its seed's weights alone."""
    from concurrent.futures import ThreadPoolExecutor

    from flows.ddsvm.model import build_network

    def weights(seed: int) -> list[torch.Tensor]:
        return [p.detach().clone() for p in build_network(ARCH, seed).parameters()]

    seeds = list(range(16)) * 4
    alone = {seed: weights(seed) for seed in set(seeds)}
    with ThreadPoolExecutor(8) as pool:
        together = list(pool.map(weights, seeds))
    assert all(all(torch.equal(a, b) for a, b in zip(alone[seed], found)) for seed, found in zip(seeds, together))


def test_the_small_resnet_trains_saves_and_keeps_lambda_zero_as_ce(split, tmp_path):
    """The full profile's backbone: features of dimension D, BatchNorm statistics saved with the weights (the
    reloaded model predicts the same), and lam = 0 still CE bit for bit (the refits run in eval mode)."""
    x, y, test = split
    resnet = Architecture("resnet", (1, 8, 8), 16, 10, width=4)
    ce = train_network(x, y, resnet, TrainConfig("ce", epochs=2), seed=2)
    ddsvm = train_network(x, y, resnet, TrainConfig("ddsvm", epochs=2, lam=0.0), seed=2)
    assert same_weights(ce.network, ddsvm.network)
    batchnorm = ce.network.backbone.stem[1]
    assert batchnorm.num_batches_tracked.item() == 2 and not torch.allclose(batchnorm.running_mean, torch.zeros(4))
    assert ce.network.eval()(test[:5])[0].shape == (5, 16)
    saved = load_model(save_model(tmp_path / "r.safetensors", ce.network, ce.svm))
    for readout in ("head", "svm"):
        np.testing.assert_array_equal(predict(saved.network, saved.svm, test)[readout],
                                      predict(ce.network, ce.svm, test)[readout])
