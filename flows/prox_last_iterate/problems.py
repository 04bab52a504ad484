"""The two instances: Q1 the network Lasso of the companion generator (RIP), Q2 the diabetes Lasso (Prox-SGD),
each saved with its high-precision reference optimum, and rebuilt as torch problem objects."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from sklearn.datasets import load_diabetes

from tasks.prox.problems import Lasso, NetworkLasso, network_lasso_data
from tasks.prox.reference import lasso_optimum, lasso_optimum_cvxpy, network_lasso_optimum

from .params import Q1, Q2, LassoDiabetes, NetLasso


def make_netlasso(p: NetLasso, seed: int) -> dict:
    data = network_lasso_data(tuple(p.group_sizes), p.features, p.rows, np.random.default_rng(seed), p.p_in, p.p_out,
                              p.noise)
    if len(data["edges"]) == 0:
        raise ValueError(f"netlasso: the generator drew no edge for seed {seed}; raise p_in or the group sizes")
    reference = network_lasso_optimum(data["X"], data["y"], data["edges"], p.lam)
    return data | {"lam": p.lam, "x_star": reference["x"], "reference": reference}


def make_lasso_diabetes(p: LassoDiabetes) -> dict:
    """Standardised X and y (population std), lam = lam_fraction * ||X^T y||_inf / n; x* by scikit-learn's Lasso,
    cross-checked by cvxpy (the difference of their F goes into the record)."""
    X, y = load_diabetes(return_X_y=True)
    X, y = (X - X.mean(0)) / X.std(0), (y - y.mean()) / y.std()
    lam = p.lam_fraction * float(np.abs(X.T @ y).max()) / len(y)
    reference = lasso_optimum(X, y, lam)
    check = lasso_optimum_cvxpy(X, y, lam)
    problem = Lasso(torch.from_numpy(X), torch.from_numpy(y), lam)
    values = problem.value(torch.from_numpy(np.stack([reference["x"], check["x"]])))
    reference["cvxpy_check"] = {"solver": check["solver"], "tolerances": check["tolerances"],
                                "F_sklearn_minus_F_cvxpy": float(values[0] - values[1])}
    return {"X": X, "y": y, "lam": lam, "x_star": reference["x"], "reference": reference}


def save(folder: Path, name: str, instance: dict) -> dict:
    """The arrays as npz; returns the reference record (solver, tolerances, status, time) for the manifest."""
    np.savez(folder / f"{name}.npz", **{k: v for k, v in instance.items() if k != "reference"})
    return {k: v for k, v in instance["reference"].items() if k != "x"}


def load(folder: Path, name: str):
    """(torch problem object, F*) of a saved instance."""
    with np.load(folder / f"{name}.npz") as data:
        arrays = {key: data[key] for key in data.files}
    if name == Q1:
        problem = NetworkLasso(torch.from_numpy(arrays["X"]), torch.from_numpy(arrays["y"]),
                               torch.from_numpy(arrays["edges"]).long(), float(arrays["lam"]))
    elif name == Q2:
        problem = Lasso(torch.from_numpy(arrays["X"]), torch.from_numpy(arrays["y"]), float(arrays["lam"]))
    else:
        raise KeyError(name)
    return problem, float(problem.value(torch.from_numpy(arrays["x_star"])[None])[0])
