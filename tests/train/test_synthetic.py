"""Synthetic problems: quadratic noise model, matrix least squares gradient, exact SVM optima by LP,
hinge subgradients, nonsmooth Rosenbrock."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from tasks.train.synthetic import (
    NS_ROSENBROCK_START,
    QuadraticProblem,
    hinge_losses,
    hinge_subgradients,
    matrix_least_squares,
    mls_loss,
    ns_rosenbrock,
    quadratic_heterogeneous,
    svm_interpolated,
    svm_noisy,
)


def test_quadratic_data_and_stochastic_gradient():
    data = quadratic_heterogeneous(2000, seed=0)
    assert data["h"].min() >= 1e-2 and data["h"].max() <= 1 and data["x0"].shape == (2000,)
    assert np.array_equal(data["h"], quadratic_heterogeneous(2000, seed=0)["h"])
    problem = QuadraticProblem(torch.from_numpy(data["h"]), noise_std=0.01)
    x = torch.from_numpy(data["x0"]).requires_grad_(True)
    problem.loss(x, torch.Generator().manual_seed(0)).backward()
    noise = x.grad - problem.h * x.detach()
    assert abs(noise.std().item() - 0.01) < 0.001 and abs(noise.mean().item()) < 0.001
    assert problem.full_loss(x).item() == pytest.approx(0.5 * float(np.sum(data["h"] * data["x0"] ** 2)))
    exact = QuadraticProblem(problem.h, noise_std=0.0)
    x.grad = None
    exact.loss(x, torch.Generator()).backward()
    assert torch.allclose(x.grad, problem.h * x.detach())


@pytest.mark.parametrize("scales", ["identity", "log_uniform"])
def test_matrix_least_squares_gradient_is_the_closed_form(scales):
    data = matrix_least_squares(64, 32, 512, 0.1, scales, seed=1)
    X, Y, W_star = (torch.from_numpy(data[k]) for k in ("X", "Y", "W_star"))
    assert X.shape == (512, 32) and Y.shape == (512, 64) and W_star.shape == (64, 32)
    W = torch.randn(64, 32, dtype=torch.float64, requires_grad=True)
    mls_loss(W, X, Y).backward()
    closed_form = (W.detach() @ X.T @ X - Y.T @ X) / len(X)
    assert torch.allclose(W.grad, closed_form, atol=1e-12)
    assert mls_loss(W_star, X, Y).item() == pytest.approx(0.5 * 64 * 0.01, rel=0.1)  # noise floor 0.5 m sigma^2
    if scales == "log_uniform":
        assert np.allclose(data["X"].var(0) / data["scales"], 1, atol=0.25) and data["scales"].min() >= 1e-2
    with pytest.raises(ValueError, match="input_scales"):
        matrix_least_squares(4, 2, 10, 0.1, "diag", seed=0)


def test_interpolated_svm_has_exact_zero_optimum():
    problem = svm_interpolated(seed=3107)
    assert problem["A"].shape == (300, 100) and problem["lp_status"] == 0
    assert abs(problem["f_star"]) <= 1e-9
    assert hinge_losses(problem["A"], problem["b"], problem["x_star"]).max() <= 1e-9
    assert hinge_losses(problem["A"], problem["b"], problem["x0"]).mean() > 0.1


def test_noisy_svm_optimum_is_the_lp_value_and_locally_minimal():
    problem = svm_noisy(seed=0)
    A, b, x_star = problem["A"], problem["b"], problem["x_star"]
    assert problem["f_star"] > 0.1 and not problem["x0"].any()
    assert hinge_losses(A, b, x_star).mean() == pytest.approx(problem["f_star"], abs=1e-9)
    rng = np.random.default_rng(0)
    for _ in range(20):
        assert hinge_losses(A, b, x_star + 1e-3 * rng.standard_normal(50)).mean() >= problem["f_star"] - 1e-9
    assert set(np.unique(b)) == {-1.0, 1.0}


def test_hinge_subgradient_matches_finite_differences_away_from_kinks():
    rng = np.random.default_rng(1)
    A, b, x = rng.standard_normal((40, 6)), rng.standard_normal(40), rng.standard_normal(6)
    margins = 1 - b * (A @ x)
    assert np.abs(margins).min() > 1e-3  # away from kinks, so the loss is differentiable
    g = hinge_subgradients(A, b, x)
    step = 1e-6
    for j in range(6):
        e = np.zeros(6)
        e[j] = step
        numeric = (hinge_losses(A, b, x + e) - hinge_losses(A, b, x - e)) / (2 * step)
        assert np.allclose(g[:, j], numeric, atol=1e-6)


def test_ns_rosenbrock():
    assert ns_rosenbrock(torch.tensor([1.0, 1.0])).item() == 0
    start = torch.tensor(NS_ROSENBROCK_START)
    assert ns_rosenbrock(start).item() == pytest.approx(10 * abs(2.0 - 2.25) + 2.5)
    assert ns_rosenbrock(torch.zeros(5, 2)).shape == (5,)
