"""Task B's training budget (epochs, Adam learning rate) chosen on a validation split of Task B's training sets,
never on its test sets: `python -m flows.sw_drso.budget_search` prints one JSON object (every budget's fit and
validation accuracy per method, and the chosen budget) that stages/sw_drso/README.md quotes.

The rule, fixed before any run: every (epochs, lr) of GRID trains the methods Task B's run group trains (ERM and
SW-DRSO, attention encoder, the default profile's other settings, its seed) on 80 % of Task B's training sets
(stratified, the split seed of task_b); a budget's score is the mean over the methods of the clean validation
accuracy; the chosen budget is the one with the fewest epochs (then the smaller lr) among those whose score is
within TIE of the best: a bigger budget must earn its run time.
"""
from __future__ import annotations

import json
import time

import numpy as np
from sklearn.model_selection import train_test_split

from tasks.core.device import single_torch_thread
from tasks.core.seeding import derive_seed

from .params import Params, RunGroup
from .training import TrainConfig, train_classifier

GRID = tuple((epochs, lr) for epochs in (40, 80, 120, 200) for lr in (1e-3, 3e-3, 1e-2))
VALIDATION_FRACTION = 0.2
TIE = 0.01  # validation accuracy: about a third of the standard error of ~250 validation sets


def validation_split(X: np.ndarray, y: np.ndarray, seed: int) -> tuple[np.ndarray, ...]:
    """X_fit, X_validation, y_fit, y_validation: a stratified split of the training sets."""
    return tuple(train_test_split(X, y, test_size=VALIDATION_FRACTION, random_state=seed, stratify=y))


def accuracy(model, X: np.ndarray, y: np.ndarray) -> float:
    from .evaluation import predict_proba

    return float((predict_proba(model, X).argmax(1) == y).mean())


def budget_rows(data: dict[str, np.ndarray], params: Params, group: RunGroup, grid=GRID) -> list[dict]:
    """One row per (epochs, lr, method): accuracy on the fit part and on the validation part, training seconds."""
    from tasks.sets.weighted_encoders import EncoderConfig

    X_fit, X_val, y_fit, y_val = validation_split(data["X_train"], data["y_train"], params.task_b.split_seed)
    encoder = EncoderConfig(pooling=group.encoder, dim=X_fit.shape[2], classes=len(data["classes"]), hidden=params.hidden)
    seed = derive_seed(params.seed, group.task, group.encoder, 0)
    rows = []
    for epochs, lr in grid:
        for method in group.methods:
            config = TrainConfig(method=method, epochs=epochs, batch=params.batch, lr=lr, proposal="batch",
                                 **params.method.model_dump())
            result = train_classifier(X_fit, y_fit, encoder, config, seed)
            rows.append({"epochs": epochs, "lr": lr, "method": method, "fit_accuracy": accuracy(result.model, X_fit, y_fit),
                         "validation_accuracy": accuracy(result.model, X_val, y_val), "wall_time_s": result.wall_time_s})
    return rows


def scores(rows: list[dict]) -> dict[tuple[int, float], float]:
    """(epochs, lr) -> the mean over methods of the validation accuracy."""
    budgets = dict.fromkeys((row["epochs"], row["lr"]) for row in rows)
    return {budget: float(np.mean([row["validation_accuracy"] for row in rows if (row["epochs"], row["lr"]) == budget]))
            for budget in budgets}


def chosen_budget(rows: list[dict]) -> tuple[int, float]:
    """The fewest epochs (then the smaller lr) among the budgets scoring within TIE of the best."""
    by_budget = scores(rows)
    best = max(by_budget.values())
    return min(budget for budget, score in by_budget.items() if score >= best - TIE)


def main() -> dict:
    from pathlib import Path

    from tasks.core.io import repo_root
    from tasks.core.params import load_paper_params
    from tasks.sets.digit_sets import digit_sets

    single_torch_thread()
    params = load_paper_params(repo_root(Path(__file__).parent), "sw_drso", "default", Params)
    group = next(group for group in params.runs if group.task == "B")
    data = digit_sets(params.task_b.n, params.task_b.split_seed, params.task_b.test_fraction)
    data["classes"] = np.arange(10)
    started = time.perf_counter()
    rows = budget_rows(data, params, group)
    epochs, lr = chosen_budget(rows)
    return {"rule": __doc__.split("\n\n")[1].replace("\n", " "), "rows": rows,
            "scores": {f"{e} epochs, lr {rate:g}": s for (e, rate), s in scores(rows).items()},
            "chosen": {"epochs": epochs, "lr": lr}, "search_wall_time_s": time.perf_counter() - started}


if __name__ == "__main__":
    print(json.dumps(main(), indent=1))
