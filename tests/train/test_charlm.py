"""Tiny char Transformer: shapes, causality, parameter split, windows, deterministic evaluation."""
from __future__ import annotations

import pytest
import torch

from tasks.train.charlm import CharLMConfig, CharTransformer, evaluate_charlm, random_windows, split_matrix_params


def test_shapes_size_and_seeded_init():
    model = CharTransformer(CharLMConfig(), seed=1)
    idx = torch.randint(0, 98, (3, 64))
    assert model(idx).shape == (3, 64, 98)
    assert model(idx[:, :10]).shape == (3, 10, 98)
    assert 100_000 < sum(p.numel() for p in model.parameters()) < 130_000
    again, other = CharTransformer(seed=1), CharTransformer(seed=2)
    assert all(torch.equal(p, q) for p, q in zip(model.parameters(), again.parameters()))
    assert not torch.equal(model.blocks[0].mlp.fc.weight, other.blocks[0].mlp.fc.weight)
    with pytest.raises(ValueError, match="context"):
        model(torch.zeros(1, 65, dtype=torch.int64))
    with pytest.raises(ValueError, match="n_heads"):
        CharLMConfig(d_model=64, n_heads=5)


def test_changing_a_future_token_leaves_earlier_logits_alone():
    model = CharTransformer(seed=0)
    idx = torch.randint(0, 97, (2, 32), generator=torch.Generator().manual_seed(0))
    changed = idx.clone()
    changed[:, 20] = (changed[:, 20] + 1) % 97
    a, b = model(idx), model(changed)
    assert torch.equal(a[:, :20], b[:, :20])
    assert not torch.allclose(a[:, 20:], b[:, 20:])


def test_split_gives_block_matrices_to_muon_and_the_rest_to_adamw():
    model = CharTransformer(seed=0)
    matrices, others = split_matrix_params(model)
    assert len(matrices) == 12  # per layer q, k, v, out, fc, proj
    assert {tuple(p.shape) for p in matrices} == {(64, 64), (256, 64), (64, 256)}
    ids = {id(p) for p in model.parameters()}
    assert {id(p) for p in matrices} | {id(p) for p in others} == ids and len(matrices) + len(others) == len(ids)
    assert all(id(p) not in {id(q) for q in matrices} for p in (model.tok_emb.weight, model.pos_emb.weight, model.head.weight))


def test_random_windows_are_shifted_pairs_and_seeded():
    data = torch.arange(1000)
    x, y = random_windows(data, 16, 8, torch.Generator().manual_seed(3))
    assert x.shape == y.shape == (8, 16) and torch.equal(y, x + 1)
    x2, _ = random_windows(data, 16, 8, torch.Generator().manual_seed(3))
    assert torch.equal(x, x2)
    with pytest.raises(ValueError, match="context"):
        random_windows(data[:16], 16, 1, torch.Generator())


def test_evaluation_is_deterministic_and_counts_fixed_windows():
    model = CharTransformer(seed=0)
    data = torch.randint(0, 97, (5000,), generator=torch.Generator().manual_seed(0))
    a = evaluate_charlm(model, data, 64, max_windows=10, batch=4)
    assert a == evaluate_charlm(model, data, 64, max_windows=10, batch=4)
    chunked = evaluate_charlm(model, data, 64, max_windows=10, batch=10)  # same windows, other float sums
    assert chunked["accuracy"] == a["accuracy"] and chunked["loss"] == pytest.approx(a["loss"], rel=1e-6)
    assert evaluate_charlm(model, data, 64, max_windows=11)["loss"] != a["loss"]
    assert abs(a["loss"] - torch.log(torch.tensor(98.0)).item()) < 0.2  # near-uniform at init
    assert a["perplexity"] == pytest.approx(torch.exp(torch.tensor(a["loss"])).item(), rel=1e-6)
    assert 0 <= a["accuracy"] <= 1 and model.training

