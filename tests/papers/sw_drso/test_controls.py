"""The C3 controls at SW-DRSO's budget (random deletion + random outliers, Worst-of-K), the held-out test outliers
(disjoint from every training outlier and point), and the per-group training budget (Task B's own epochs and lr,
chosen on a validation split by flows/sw_drso/budget_search.py)."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from flows.sw_drso.adversary import clean_weights, deletion_cap
from flows.sw_drso.budget_search import budget_rows, chosen_budget, scores, validation_split
from flows.sw_drso.params import Params, TaskB
from flows.sw_drso.pipeline import CLOUD_OUTLIERS, outlier_region
from flows.sw_drso.training import TrainConfig, outlier_pool, random_budget, train_classifier, worst_of
from tasks.core.params import load_paper_params
from tasks.sets.capped_simplex import total_variation
from tasks.sets.primitive_clouds import CLASSES, primitive_clouds
from tasks.sets.weighted_encoders import EncoderConfig, WeightedSetClassifier
from tests.conftest import ROOT

N, M, B = 16, 4, 30


@pytest.fixture(scope="module")
def data():
    return primitive_clouds(CLASSES[:5], 6, N, seed=3)


def budgets(seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Generator]:
    g = torch.Generator().manual_seed(seed)
    return 0.3 * torch.rand(B, generator=g), 0.5 * torch.rand(B, generator=g), g


def test_random_budget_deletes_floor_rho_n_and_stays_in_the_adversarys_set(data):
    X = torch.from_numpy(data[0])
    eps, rho, g = budgets()
    Z, weights = random_budget(X, M, eps, rho, "ball", g)
    assert Z.shape == (B, N + M, 3) and torch.equal(Z[:, :N], X)
    assert ((weights.a_in == 0).sum(1) == torch.floor(rho * N)).all()  # the whole deletion budget, spent at random
    assert torch.allclose(weights.a_in.sum(1), torch.ones(B)) and (weights.a_in <= deletion_cap(N, rho)[:, None] + 1e-6).all()
    assert torch.allclose(weights.a_out, torch.full((B, M), 1.0 / M))
    assert torch.allclose(weights.a[:, N:].sum(1), eps)
    assert (total_variation(weights.a, clean_weights(B, N, M, Z)) <= torch.maximum(eps, rho) + 1e-6).all()
    _, other = random_budget(X, M, eps, rho, "ball", g)
    assert not torch.equal(weights.a_in, other.a_in)  # each draw deletes other elements


def test_worst_of_k_trains_on_each_sets_highest_loss_draw(data):
    X, y = torch.from_numpy(data[0]), torch.from_numpy(data[1])
    torch.manual_seed(0)
    model = WeightedSetClassifier(EncoderConfig(pooling="attention", dim=3, classes=5, hidden=16))
    eps, rho, g = budgets(1)
    draws = [random_budget(X, M, eps, rho, "ball", g) for _ in range(4)]
    Z, picked = worst_of(model, draws, y)
    with torch.no_grad():
        losses = torch.stack([F.cross_entropy(model(z, w.a), y, reduction="none") for z, w in draws])
        chosen = F.cross_entropy(model(Z, picked.a), y, reduction="none")
    assert torch.allclose(chosen, losses.max(dim=0).values, atol=1e-6)
    assert len(set(losses.argmax(dim=0).tolist())) > 1  # per set, not one draw for the whole batch


@pytest.mark.heavy  # three short trainings: ~3-7 s
def test_the_controls_change_training_and_worst_of_one_is_the_random_control(data):
    X, y = data
    encoder = EncoderConfig(pooling="mean", dim=3, classes=5, hidden=16)
    trained = {method: train_classifier(X, y, encoder, TrainConfig(method=method, epochs=2), 0)
               for method in ("random_weights", "random_drop_outliers")}
    single = train_classifier(X, y, encoder, TrainConfig(method="worst_of_k", epochs=2, worst_of_k=1), 0)
    assert trained["random_drop_outliers"].log == single.log  # K = 1: nothing to pick from
    assert trained["random_weights"].log[-1]["deleted_fraction"] == 0
    assert 0.1 < trained["random_drop_outliers"].log[-1]["deleted_fraction"] < 0.4  # floor(rho n)/n, rho ~ U[0, 0.5]


def test_held_out_outliers_are_disjoint_from_every_training_outlier_and_point(data):
    training_outliers = outlier_pool(torch.zeros(200, N, 3), 50, "ball", torch.Generator().manual_seed(0))
    test_outliers = CLOUD_OUTLIERS.sample((200, 50), np.random.default_rng(0))
    assert training_outliers.norm(dim=-1).max() <= 1 and np.linalg.norm(data[0], axis=2).max() <= 1 + 1e-6
    assert np.linalg.norm(test_outliers, axis=-1).min() > 1 and np.abs(test_outliers).max() <= 1
    assert outlier_region("A") is CLOUD_OUTLIERS and outlier_region("B").outside_radius == 0


def test_a_run_group_budget_replaces_the_profiles():
    params = load_paper_params(ROOT, "sw_drso", "default", Params)
    by_task = {(group.task, group.encoder): group for group in params.runs}
    assert params.budget(by_task["A", "attention"]) == (params.epochs, params.lr)
    epochs, lr = params.budget(by_task["B", "attention"])
    assert (epochs, lr) != (params.epochs, params.lr)  # Task B's own budget, chosen on its validation split
    assert set(by_task["A", "attention"].methods) >= {"random_weights", "random_drop_outliers", "worst_of_k", "sw_drso"}


def score_rows(table: dict[tuple[int, float], tuple[float, float]]) -> list[dict]:
    """Rows of the budget search: (epochs, lr) -> validation accuracy of ERM and of SW-DRSO."""
    return [{"epochs": e, "lr": lr, "method": method, "validation_accuracy": accuracy}
            for (e, lr), pair in table.items() for method, accuracy in zip(("erm", "sw_drso"), pair)]


def test_the_budget_rule_takes_the_fewest_epochs_within_the_tie_of_the_best():
    table = {(40, 1e-3): (0.40, 0.38), (120, 1e-3): (0.60, 0.58), (120, 3e-3): (0.67, 0.65),
             (200, 3e-3): (0.68, 0.65), (200, 1e-2): (0.66, 0.60)}
    assert scores(score_rows(table))[(120, 3e-3)] == pytest.approx(0.66)
    assert chosen_budget(score_rows(table)) == (120, 3e-3)  # 0.005 below the best: within TIE, fewer epochs
    table[(200, 3e-3)] = (0.70, 0.66)
    assert chosen_budget(score_rows(table)) == (200, 3e-3)  # 0.02 better: worth the longer run


@pytest.mark.heavy  # two short trainings: ~2-6 s on a loaded machine
def test_the_budget_search_never_sees_the_test_sets():
    params = load_paper_params(ROOT, "sw_drso", "smoke", Params)
    group = params.runs[0].model_copy(update={"task": "B"})
    X, y = primitive_clouds(CLASSES[:5], 10, 8, seed=0)
    data = {"X_train": X, "y_train": y, "classes": np.arange(5)}  # no test sets to read
    params = params.model_copy(update={"task_b": TaskB(n=8, split_seed=0, test_fraction=0.3)})
    rows = budget_rows(data, params, group, grid=((1, 1e-3),))
    assert [row["method"] for row in rows] == ["erm", "sw_drso"]
    assert all(0 <= row["validation_accuracy"] <= 1 and row["epochs"] == 1 for row in rows)
    X_fit, X_val, y_fit, y_val = validation_split(X, y, 0)
    assert len(X_val) == 10 and np.bincount(y_val).tolist() == [2] * 5
    assert not any((X_val[:, None] == X_fit[None]).all(axis=(2, 3)).any(axis=1))
