"""The S-Adam paper's small-scale runs (spec s_adam §6): digits QAT, digits with noisy labels and
small batches, and the nonsmooth Rosenbrock toy, each for one (optimizer, seed).

Every run returns plain data: per-epoch rows (train loss, test loss/accuracy, mean rho and damp,
wall time) or the Rosenbrock trajectory, plus the per-step LGI trace where the optimizer has one.
AdamW is the registry's (tasks.optim.registry); S-Adam and Prox-SGD come from their modules.
"""
from __future__ import annotations

import numpy as np
import torch

from tasks.core.seeding import derive_seed
from tasks.optim.prox_sgd import ProxSGD
from tasks.optim.registry import OptimizerFactory, optimizer_factory
from tasks.optim.sadam import SAdam
from tasks.train.digits import ClassifierRun, DigitsSplit, train_classifier
from tasks.train.loop import run_training
from tasks.train.synthetic import ns_rosenbrock


def make_optimizer(kind: str, options: dict, seed: int) -> OptimizerFactory:
    """`kind` with `options` (the constructor's keyword arguments): AdamW from the registry, the paper's S-Adam
    and its Prox-SGD baseline from their modules; S-Adam's probe generator is seeded from the run's `seed`."""
    if kind == "sadam":
        return lambda matrices, others: SAdam([*matrices, *others], **options, seed=derive_seed(seed, "probes"))
    if kind == "prox_sgd":
        return lambda matrices, others: ProxSGD([*matrices, *others], **options)
    return optimizer_factory(kind, **options)


def _lgi_rows(curve: list[dict]) -> list[dict]:
    return [{"step": row["step"], "rho": row["rho"], "damp": row["damp"]} for row in curve if "rho" in row]


def _mean(rows: list[dict], key: str) -> float | None:
    values = [row[key] for row in rows if key in row]
    return float(np.mean(values)) if values else None


def epoch_record(run: ClassifierRun) -> dict:
    """The paper's record of a digits run: one row per epoch 1.. and the per-step LGI trace."""
    rows = []
    for evaluation, wall_time_s in zip(run.evals[1:], run.epoch_wall_time_s):
        curve = run.epoch_curve(evaluation["epoch"])
        rows.append({"epoch": evaluation["epoch"], "train_loss": _mean(curve, "loss"), "test_loss": evaluation["loss"],
                     "test_accuracy": evaluation["accuracy"], "mean_rho": _mean(curve, "rho"),
                     "mean_damp": _mean(curve, "damp"), "wall_time_s": wall_time_s})
    return {"epochs": rows, "lgi": _lgi_rows(run.curve)}


def train_digits(data: dict[str, np.ndarray], labels: str, *, kind: str, options: dict, seed: int, epochs: int,
                 batch: int, hidden: tuple[int, ...], quant: tuple[float, int, int] | None,
                 device: str = "cpu") -> dict:
    """Train an MLP 64-hidden-10 on data["x_train"], data[labels] for `epochs` epochs of `batch`
    samples (tasks.train.digits.train_classifier); evaluate on the clean test split after every epoch."""
    split = DigitsSplit(*(torch.as_tensor(data[key]) for key in ("x_train", labels, "x_test", "y_test")))
    run = train_classifier(split, make_optimizer(kind, options, seed), n_classes=int(data["n_classes"]), seed=seed,
                           epochs=epochs, batch=batch, hidden=hidden, quant=quant, device=device)
    return epoch_record(run)


def sign_changes(values: np.ndarray) -> int:
    """How often consecutive entries of `values` have opposite signs (zeros skipped)."""
    signs = np.sign(values)
    signs = signs[signs != 0]
    return int(np.count_nonzero(signs[1:] != signs[:-1]))


def run_rosenbrock(*, kind: str, options: dict, seed: int, start: tuple[float, float], steps: int) -> dict:
    """`steps` optimizer steps on f(x, y) = 10 |y - x^2| + |1 - x| from `start` (float64).

    trajectory: [steps + 1, 2] iterates, the start included; chattering: sign changes of y - x^2
    along them; final_distance: |(x, y) - (1, 1)| at the end.
    """
    xy = torch.nn.Parameter(torch.tensor(start, dtype=torch.float64))
    optimizer = make_optimizer(kind, options, seed)([], [xy])
    result = run_training(optimizer, lambda _: ns_rosenbrock(xy), lambda step: None, steps,
                          evaluate=lambda: dict(zip("xy", xy.detach().tolist())), eval_every=1)
    trajectory = np.array([start] + [(row["x"], row["y"]) for row in result.evals])
    return {"trajectory": trajectory, "lgi": _lgi_rows(result.curve),
            "chattering": sign_changes(trajectory[:, 1] - trajectory[:, 0] ** 2),
            "final_distance": float(np.hypot(*(trajectory[-1] - 1.0))), "mean_damp": _mean(result.curve, "damp"),
            "wall_time_s": result.wall_time_s}
