"""Digits split and scalings, noisy labels, fake quantisation with STE, the (quantised) MLP, batches,
and the one classifier runner (train_classifier)."""
from __future__ import annotations

import pytest
import torch

from tasks.core.seeding import derive_seed
from tasks.optim.polyak import SPSSafe
from tasks.train.digits import (
    MLP,
    QUANT_4BIT,
    QUANT_CIFAR100_2BIT,
    DigitsSplit,
    batch_sampler,
    digits_split,
    evaluate_classifier,
    fake_quantize,
    minibatches,
    noisy_labels,
    steps_per_epoch,
    train_classifier,
)
from tasks.train.loop import run_training


def test_split_is_stratified_seeded_and_scaled():
    split = digits_split(0, 0.3, "pm1")
    assert split.x_train.shape == (1257, 64) and split.x_test.shape == (540, 64)
    assert split.x_train.min() == -1 and split.x_train.max() == 1 and split.y_train.dtype == torch.int64
    per_class = torch.bincount(torch.cat([split.y_train, split.y_test]), minlength=10)
    assert (torch.bincount(split.y_test, minlength=10) - 0.3 * per_class).abs().max() <= 1  # stratified
    assert torch.equal(digits_split(0, 0.3, "pm1").x_train, split.x_train)
    assert not torch.equal(digits_split(1, 0.3, "pm1").x_train, split.x_train)
    unit = digits_split(0, 0.3, "unit")
    assert torch.allclose(2 * unit.x_train - 1, split.x_train)
    standard = digits_split(0, 0.2, "standard")
    assert standard.x_train.mean(0).abs().max() < 1e-5
    with pytest.raises(ValueError, match="scaling"):
        digits_split(0, 0.3, "minmax")


def test_noisy_labels_change_exactly_the_count_and_never_to_the_same_class():
    y = torch.randint(0, 10, (1257,), generator=torch.Generator().manual_seed(0))
    noisy = noisy_labels(y, 0.3, 10, torch.Generator().manual_seed(1))
    assert (noisy != y).sum().item() == round(0.3 * 1257)
    assert noisy.min() >= 0 and noisy.max() <= 9 and torch.equal(y, y.clone())
    assert torch.equal(noisy, noisy_labels(y, 0.3, 10, torch.Generator().manual_seed(1)))
    # a changed label is uniform over the 9 other classes
    y0 = torch.zeros(9000, dtype=torch.int64)
    counts = torch.bincount(noisy_labels(y0, 1.0, 10, torch.Generator().manual_seed(2)), minlength=10)
    assert counts[0] == 0 and counts[1:].min() > 850 and counts[1:].max() < 1150
    with pytest.raises(ValueError, match="fraction"):
        noisy_labels(y, 1.5, 10, torch.Generator())


@pytest.mark.parametrize("quant", [QUANT_4BIT, QUANT_CIFAR100_2BIT])
def test_fake_quantize_levels_and_straight_through_gradient(quant):
    q, lo, hi = quant
    x = torch.randn(50, 40, generator=torch.Generator().manual_seed(0), requires_grad=True)
    xq = fake_quantize(x, q, lo, hi)
    assert len(torch.unique(xq)) <= hi - lo + 1
    upstream = torch.randn(50, 40)
    xq.backward(upstream)
    assert torch.equal(x.grad, upstream)


def test_four_bit_levels_are_sevenths_at_unit_max():
    x = torch.linspace(-1, 1, 1001)
    levels = torch.unique(fake_quantize(x, *QUANT_4BIT))
    assert len(levels) == 15  # -7..7: with max|x| = 1 the clamp at -8 is never reached
    assert torch.allclose(levels, torch.arange(-7, 8) / 7, atol=1e-4)


def test_quantised_mlp_quantises_weights_and_hidden_inputs():
    torch.manual_seed(0)
    full, quantised = MLP(seed=3), MLP(quant=QUANT_4BIT, seed=3)
    assert all(torch.equal(p, q) for p, q in zip(full.parameters(), quantised.parameters()))
    x = torch.randn(16, 64)
    assert full(x).shape == quantised(x).shape == (16, 10)
    assert not torch.allclose(full(x), quantised(x))
    # the quantised net equals a full-precision net on quantised weights and inputs
    with torch.no_grad():
        h = x
        for i, layer in enumerate(quantised.layers):
            if i < 2:
                h = fake_quantize(h, *QUANT_4BIT)
            h = h @ fake_quantize(layer.weight, *QUANT_4BIT).T + layer.bias
            h = torch.relu(h) if i < 2 else h
    assert torch.allclose(quantised(x), h, atol=1e-6)
    result = evaluate_classifier(quantised, x, torch.zeros(16, dtype=torch.int64))
    assert set(result) == {"loss", "accuracy"} and result["loss"] > 0


def test_minibatches_cover_one_epoch_and_sampler_continues_into_the_next():
    batches = list(minibatches(10, 4, torch.Generator().manual_seed(0)))
    assert [len(b) for b in batches] == [4, 4, 2]
    assert sorted(torch.cat(batches).tolist()) == list(range(10))
    assert steps_per_epoch(10, 4) == 3
    next_batch = batch_sampler(10, 4, torch.Generator().manual_seed(0))
    drawn = [next_batch(i) for i in range(6)]
    assert all(torch.equal(a, b) for a, b in zip(drawn[:3], batches))
    assert sorted(torch.cat(drawn[3:]).tolist()) == list(range(10)) and not torch.equal(drawn[3], drawn[0])


def tiny_split(seed=0) -> DigitsSplit:
    g = torch.Generator().manual_seed(seed)
    return DigitsSplit(torch.rand(40, 8, generator=g) * 2 - 1, torch.arange(40) % 3, torch.rand(12, 8, generator=g) * 2 - 1,
                       torch.arange(12) % 3)


def sgd(matrices, others):
    assert matrices == []  # the MLP hands every parameter over as `others`, in the model's order
    return torch.optim.SGD(others, lr=0.1)


RUN = dict(n_classes=3, epochs=2, batch=16, hidden=(6,))


def test_classifier_run_rows_evaluations_and_wall_times_per_epoch():
    run = train_classifier(tiny_split(), sgd, seed=1, quant=QUANT_4BIT, **RUN)
    assert run.steps_per_epoch == 3 and len(run.epoch_wall_time_s) == 2 and all(t > 0 for t in run.epoch_wall_time_s)
    assert [row["step"] for row in run.curve] == [1, 2, 3, 4, 5, 6] and [row["epoch"] for row in run.curve] == [1] * 3 + [2] * 3
    assert [row["grad_evals"] for row in run.curve] == [1, 2, 3, 4, 5, 6]
    assert [(e["epoch"], e["step"]) for e in run.evals] == [(0, 0), (1, 3), (2, 6)]
    assert all(row["grad_norm_sq"] > 0 for row in run.curve) and run.epoch_curve(2) == run.curve[3:]
    again = train_classifier(tiny_split(), sgd, seed=1, quant=QUANT_4BIT, **RUN)
    assert [row["loss"] for row in again.curve] == [row["loss"] for row in run.curve] and again.evals == run.evals


def test_classifier_seeds_the_weights_and_batches_from_the_run_seed_alone():
    split = tiny_split()
    sgd_run, sps_run = (train_classifier(split, make, seed=1, **RUN)
                        for make in (sgd, lambda matrices, others: SPSSafe(others, M=1.0)))
    assert sgd_run.evals[0] == sps_run.evals[0]  # the same initial network for every optimizer of a seed
    assert train_classifier(split, sgd, seed=2, **RUN).evals[0] != sgd_run.evals[0]
    # by hand: weights from derive_seed(seed, "model"), batches from derive_seed(seed, "shuffle"), one run_training
    model = MLP((8, 6, 3), seed=derive_seed(1, "model"))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    result = run_training(optimizer, lambda i: torch.nn.functional.cross_entropy(model(split.x_train[i]), split.y_train[i]),
                          batch_sampler(40, 16, torch.Generator().manual_seed(derive_seed(1, "shuffle"))), 6,
                          evaluate=lambda: evaluate_classifier(model, split.x_test, split.y_test))
    assert [row["loss"] for row in result.curve] == [row["loss"] for row in sgd_run.curve]
    assert result.final["accuracy"] == sgd_run.evals[-1]["accuracy"]


def test_classifier_keeps_the_optimizers_own_gradient_norm():
    run = train_classifier(tiny_split(), lambda matrices, others: SPSSafe(others, M=1.0), seed=1, **RUN)
    assert all({"step_size", "grad_norm_sq", "safeguard_active"} <= set(row) for row in run.curve)
