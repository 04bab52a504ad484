"""The zeroth-order Hessian estimators (spec zovh §10): unbiasedness, the smoothing bias, shift invariance, the
"- I" identity, the optimal baseline, reuse, the low-rank error route, against exact (autograd) Hessians."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from tasks.core.device import single_torch_thread

from tasks.zeroth.functions import (autograd_hessian, hessian_study_functions, random_quadratic, rosenbrock,
                                    rosenbrock_hessian, styblinski_tang, styblinski_tang_hessian)
from tasks.zeroth.hessian import (NAMES, ZoVHReuse, baseline_estimate, estimator, mean_baseline_estimate)

DRAWS = 4000

single_torch_thread()  # tiny tensors: a second thread only contends on a loaded machine


def monte_carlo(name: str, f, theta: torch.Tensor, K: int, mu: float, draws: int = DRAWS, seed: int = 0):
    generator = torch.Generator().manual_seed(seed)
    estimates = torch.stack([estimator(name)(f, theta, K, generator, mu).dense() for _ in range(draws)])
    return estimates.mean(0), estimates.std(0) / draws ** 0.5


@pytest.fixture(scope="module")
def small_quadratic():
    A, b = random_quadratic(5, torch.Generator().manual_seed(3))
    theta = torch.linspace(-1, 1, 5, dtype=torch.float64)
    return A, b, theta, lambda X: 0.5 * ((X @ A) * X).sum(-1) + X @ b


@pytest.mark.parametrize("name", ["zovh", "s1", "s2", "scd"])
def test_unbiased_for_the_hessian_of_a_quadratic(small_quadratic, name):
    A, _, theta, f = small_quadratic
    mean, se = monte_carlo(name, f, theta, 3, mu=0.3)
    assert ((mean - A).abs() <= 5 * se + 1e-12).all(), (mean - A) / se


def test_cd_is_biased_by_half_the_trace(small_quadratic):
    A, _, theta, f = small_quadratic
    mean, se = monte_carlo("cd", f, theta, 3, mu=0.3)
    target = A + torch.trace(A) / 2 * torch.eye(5, dtype=torch.float64)
    assert ((mean - target).abs() <= 5 * se + 1e-12).all()
    assert ((mean - A).abs() > 5 * se).any()


def test_zovh_matches_the_smoothed_hessian_of_a_quartic():
    x, mu = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64), 0.5
    mean, se = monte_carlo("zovh", styblinski_tang, x, 3, mu)
    smoothed = torch.diag(0.5 * (12 * x ** 2 - 32) + 6 * mu ** 2)
    assert ((mean - smoothed).abs() <= 5 * se + 1e-12).all()


@pytest.mark.parametrize("name", ["zovh", "zovh_reuse", "s2", "scd", "s1"])
def test_shift_invariance_except_s1(small_quadratic, name):
    _, _, theta, f = small_quadratic
    shifted = lambda X: f(X) + 1e3  # noqa: E731
    estimates = []
    for objective in (f, shifted):
        generator, make = torch.Generator().manual_seed(5), estimator(name)
        for _ in range(3):  # reuse: its buffer carries earlier pairs into the last estimate
            result = make(objective, theta, 3, generator, 0.1)
        estimates.append(result.dense())
    change = float((estimates[0] - estimates[1]).norm() / estimates[0].norm())
    assert change > 1e-3 if name == "s1" else change < 1e-9


def test_minus_identity_vanishes_with_the_mean_baseline():
    generator = torch.Generator().manual_seed(1)
    U, F = torch.randn(4, 6, generator=generator, dtype=torch.float64), torch.randn(4, generator=generator, dtype=torch.float64)
    with_identity = baseline_estimate(U, F, F.mean(), 0.1, 3, 4, minus_identity=True)
    assert abs(with_identity.shift) < 1e-12
    torch.testing.assert_close(with_identity.dense(), mean_baseline_estimate(U, F, 0.1, 4).dense(), rtol=1e-12, atol=1e-9)


def test_variance_minimising_baseline():
    """Among constant baselines b the Frobenius variance of (f - b) A / mu^2 is smallest near
    b* = E[f ||A||^2] / E[||A||^2], and smaller at E[f] (what the sample mean estimates) than at 0 or f(theta)."""
    rng = np.random.default_rng(0)
    d, mu, n = 4, 1.0, 200_000
    A = np.diag([1.0, 2.0, 3.0, 4.0])
    theta = np.full(d, 0.5)
    f = lambda X: 5.0 + 0.5 * np.einsum("ni,ij,nj->n", X, A, X)  # noqa: E731
    u = rng.standard_normal((n, d))
    values = f(theta + mu * u)
    sq = (u * u).sum(1)
    norms = sq ** 2 - 2 * sq + d  # ||u u^T - I||_F^2

    def variance(b: float) -> float:
        # E||(f - b) A||^2 - ||E (f - b) A||^2; the mean term is the same for every b since E[A] = 0
        return float(np.mean((values - b) ** 2 * norms))

    b_star = float(np.mean(values * norms) / np.mean(norms))
    grid = np.linspace(values.mean() - 5, values.mean() + 5, 201)
    best = grid[np.argmin([variance(b) for b in grid])]
    assert abs(best - b_star) <= grid[1] - grid[0]
    assert variance(values.mean()) < min(variance(0.0), variance(float(f(theta[None])[0])))


def test_reuse_without_history_is_zovh(small_quadratic):
    _, _, theta, f = small_quadratic
    plain = estimator("zovh")(f, theta, 4, torch.Generator().manual_seed(9), 0.1)
    reuse = ZoVHReuse(0)(f, theta, 4, torch.Generator().manual_seed(9), 0.1)
    torch.testing.assert_close(plain.dense(), reuse.dense(), rtol=0, atol=0)


def test_reuse_keeps_the_previous_pairs(small_quadratic):
    _, _, theta, f = small_quadratic
    make, generator = ZoVHReuse(2), torch.Generator().manual_seed(0)
    sizes = [len(make(f, theta, 3, generator, 0.1).weights) for _ in range(5)]
    assert sizes == [3, 6, 9, 9, 9]


def test_query_counts():
    theta, generator = torch.zeros(6, dtype=torch.float64), torch.Generator().manual_seed(0)
    counts = {name: estimator(name)(lambda X: (X ** 2).sum(-1), theta, 7, generator, 0.1).queries for name in NAMES}
    assert counts == {"s1": 7, "s2": 8, "scd": 7, "cd": 7, "zovh": 7, "zovh_reuse": 7}


def test_low_rank_error_route_equals_the_dense_one():
    generator = torch.Generator().manual_seed(2)
    A, _ = random_quadratic(100, generator)
    for name in ("zovh", "s1", "scd"):
        result = estimator(name)(lambda X: 0.5 * ((X @ A) * X).sum(-1), torch.ones(100, dtype=torch.float64), 5,
                                 generator, 0.1)
        dense = float(torch.linalg.matrix_norm(result.dense() - A))
        assert abs(result.frobenius_error(A) - dense) <= 1e-9 * dense


def test_autograd_hessians_equal_the_closed_forms():
    x = torch.randn(7, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    torch.testing.assert_close(autograd_hessian(rosenbrock(10.0), x), rosenbrock_hessian(x, 10.0))
    torch.testing.assert_close(autograd_hessian(styblinski_tang, x), styblinski_tang_hessian(x))
    A, b = random_quadratic(7, torch.Generator().manual_seed(0))
    functions = hessian_study_functions(A, b)
    torch.testing.assert_close(functions["quadratic"].hessian(x), A)
    # the minimisers: zero gradient
    for function in functions.values():
        z = function.minimiser.clone().requires_grad_(True)
        (grad,) = torch.autograd.grad(function.f(z[None])[0], z)
        assert float(grad.abs().max()) < 1e-4


def test_random_quadratic_spectrum():
    A, _ = random_quadratic(20, torch.Generator().manual_seed(0))
    torch.testing.assert_close(torch.linalg.eigvalsh(A), torch.linspace(1, 10, 20, dtype=torch.float64))
