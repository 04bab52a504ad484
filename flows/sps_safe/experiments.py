"""sps_safe P3 (spec §6): the digits MLP (tasks.train.digits.train_classifier) trained by SPS_safe, IMA-SPS_safe
and SPS_max (tasks.optim.polyak) and the registry's SGD and Adam, with the test accuracy per epoch and the
mini-batch gradient norm of every step (the paper: under SPS_safe gradient norms do not collapse)."""
from __future__ import annotations

import numpy as np

from tasks.optim.polyak import IMASPSSafe, SPSMax, SPSSafe
from tasks.optim.registry import OptimizerFactory, optimizer_factory
from tasks.train.digits import DigitsSplit, train_classifier

from .params import DigitsOptimizerParams

HIDDEN, N_CLASSES = (128, 128), 10  # the 64-128-128-10 MLP
POLYAK = {"sps_safe": SPSSafe, "ima_sps_safe": IMASPSSafe, "sps_max": SPSMax}
# the fields each kind reads (the rest of DigitsOptimizerParams is ignored); cross-entropy's lower bound
# l* = 0 is the Polyak classes' default ell_star
KIND_FIELDS = {"sps_safe": ("M",), "ima_sps_safe": ("M", "lam"), "sps_max": ("c", "gamma_b"), "sgd": ("lr",),
               "adam": ("lr",)}


def hyperparameters(spec: DigitsOptimizerParams) -> dict:
    return {name: getattr(spec, name) for name in KIND_FIELDS[spec.kind]}


def make_optimizer(spec: DigitsOptimizerParams) -> OptimizerFactory:
    """The paper's Polyak steps from tasks.optim.polyak, SGD and Adam from the registry."""
    if spec.kind in POLYAK:
        return lambda matrices, others: POLYAK[spec.kind]([*matrices, *others], **hyperparameters(spec))
    return optimizer_factory(spec.kind, **hyperparameters(spec))


def run_label(spec: DigitsOptimizerParams) -> str:
    """The run's name, e.g. sps_safe_M1, ima_sps_safe_M1_lam9, sps_max_c0.5_gamma_b1, adam_lr0.001."""
    return "_".join([spec.kind, *(f"{name}{value:g}" for name, value in hyperparameters(spec).items())])


def train_digits(split: DigitsSplit, spec: DigitsOptimizerParams, *, epochs: int, batch: int, seed: int,
                 device: str = "cpu") -> dict:
    """One P3 run: per-epoch test accuracy/loss (epoch 0 = init), per-step train loss, gradient norm and step size
    (nan where the method has no step size), training wall time."""
    run = train_classifier(split, make_optimizer(spec), n_classes=N_CLASSES, seed=seed,
                           epochs=epochs, batch=batch, hidden=HIDDEN, device=device)
    return {"label": run_label(spec), "kind": spec.kind, "seed": seed, "steps_per_epoch": run.steps_per_epoch,
            "test_accuracy": np.array([e["accuracy"] for e in run.evals]),
            "test_loss": np.array([e["loss"] for e in run.evals]),
            "train_loss": np.array([row["loss"] for row in run.curve]),
            "grad_norm": np.sqrt([row["grad_norm_sq"] for row in run.curve]),
            "step_size": np.array([row.get("step_size", np.nan) for row in run.curve]),
            "wall_time_s": float(sum(run.epoch_wall_time_s))}
