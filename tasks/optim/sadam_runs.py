"""The S-Adam paper's small-scale runs (spec s_adam §6): digits QAT, digits with noisy labels and
small batches, and the nonsmooth Rosenbrock toy, each for one (optimizer, seed).

Every run returns plain data: per-epoch rows (train loss, test loss/accuracy, mean rho and damp,
wall time) or the Rosenbrock trajectory, plus the per-step LGI trace where the optimizer has one.
"""
from __future__ import annotations

import numpy as np
import torch

from tasks.core.seeding import derive_seed
from tasks.optim.prox_sgd import ProxSGD
from tasks.optim.sadam import SAdam
from tasks.train.digits import MLP, batch_sampler, evaluate_classifier, steps_per_epoch
from tasks.train.loop import run_training
from tasks.train.synthetic import ns_rosenbrock

OPTIMIZER_KINDS = ("adamw", "prox_sgd", "sadam")


def build_optimizer(parameters, kind: str, options: dict, seed: int) -> torch.optim.Optimizer:
    """AdamW (torch's), Prox-SGD or S-Adam from `options` (the constructor's keyword arguments);
    S-Adam's probe generator is seeded from `seed`."""
    if kind == "adamw":
        return torch.optim.AdamW(parameters, **options)
    if kind == "prox_sgd":
        return ProxSGD(parameters, **options)
    if kind == "sadam":
        return SAdam(parameters, **options, seed=derive_seed(seed, "probes"))
    raise ValueError(f"optimizer kind: must be one of {OPTIMIZER_KINDS}, got {kind!r}")


def _lgi_rows(curve: list[dict], offset: int) -> list[dict]:
    return [{"step": offset + row["step"], "rho": row["rho"], "damp": row["damp"]} for row in curve if "rho" in row]


def _mean(rows: list[dict], key: str) -> float | None:
    values = [row[key] for row in rows if key in row]
    return float(np.mean(values)) if values else None


def train_digits(data: dict[str, np.ndarray], labels: str, *, kind: str, options: dict, seed: int, epochs: int,
                 batch: int, hidden: tuple[int, ...], quant: tuple[float, int, int] | None,
                 device: str = "cpu") -> dict:
    """Train an MLP 64-hidden-10 on data["x_train"], data[labels] for `epochs` epochs of `batch`
    samples; evaluate on the clean test split after every epoch.

    Model weights and the shuffling order come from `seed` alone, so every optimizer of a seed
    starts from the same network and sees the same batches.
    """
    x_train = torch.as_tensor(data["x_train"], dtype=torch.float32, device=device)
    y_train = torch.as_tensor(data[labels], dtype=torch.int64, device=device)
    x_test = torch.as_tensor(data["x_test"], dtype=torch.float32, device=device)
    y_test = torch.as_tensor(data["y_test"], dtype=torch.int64, device=device)
    model = MLP((x_train.shape[1], *hidden, int(data["n_classes"])), quant=quant, seed=derive_seed(seed, "model")).to(device)
    optimizer = build_optimizer(model.parameters(), kind, options, seed)
    next_batch = batch_sampler(len(x_train), batch, torch.Generator().manual_seed(derive_seed(seed, "shuffle")))

    def loss_on_batch(indices: torch.Tensor) -> torch.Tensor:
        indices = indices.to(device)
        return torch.nn.functional.cross_entropy(model(x_train[indices]), y_train[indices])

    per_epoch = steps_per_epoch(len(x_train), batch)
    rows, lgi = [], []
    for epoch in range(1, epochs + 1):  # one run_training per epoch: its wall time is the epoch's
        result = run_training(optimizer, loss_on_batch, next_batch, per_epoch,
                              evaluate=lambda: evaluate_classifier(model, x_test, y_test))
        lgi += _lgi_rows(result.curve, (epoch - 1) * per_epoch)
        rows.append({"epoch": epoch, "train_loss": _mean(result.curve, "loss"), "test_loss": result.final["loss"],
                     "test_accuracy": result.final["accuracy"], "mean_rho": _mean(result.curve, "rho"),
                     "mean_damp": _mean(result.curve, "damp"), "wall_time_s": result.wall_time_s})
    return {"epochs": rows, "lgi": lgi}


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
    optimizer = build_optimizer([xy], kind, options, seed)
    result = run_training(optimizer, lambda _: ns_rosenbrock(xy), lambda step: None, steps,
                          evaluate=lambda: dict(zip("xy", xy.detach().tolist())), eval_every=1)
    trajectory = np.array([start] + [(row["x"], row["y"]) for row in result.evals])
    return {"trajectory": trajectory, "lgi": _lgi_rows(result.curve, 0),
            "chattering": sign_changes(trajectory[:, 1] - trajectory[:, 0] ** 2),
            "final_distance": float(np.hypot(*(trajectory[-1] - 1.0))), "mean_damp": _mean(result.curve, "damp"),
            "wall_time_s": result.wall_time_s}
