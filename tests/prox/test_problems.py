"""The composite problems and the stochastic proximal runner (spec §10, tests 4-8)."""
from __future__ import annotations

import math

import numpy as np
import torch

from tasks.core.device import single_torch_thread
from tasks.prox.maps import l1_prox
from tasks.prox.problems import Lasso, NetworkLasso, network_lasso_data
from tasks.prox.reference import lasso_optimum, lasso_optimum_cvxpy, network_lasso_optimum
from tasks.prox.stochastic import horizon_step, log_steps, run_prox

single_torch_thread()


def small_netlasso(seed: int = 0, lam: float = 1.0) -> tuple[NetworkLasso, dict]:
    data = network_lasso_data((4, 4), 3, 6, np.random.default_rng(seed))
    problem = NetworkLasso(torch.from_numpy(data["X"]), torch.from_numpy(data["y"]), torch.from_numpy(data["edges"]), lam)
    return problem, data


def small_lasso() -> Lasso:
    rng = np.random.default_rng(1)
    X = rng.standard_normal((40, 6))
    y = X @ np.array([1.0, -2.0, 0, 0, 0.5, 0]) + 0.1 * rng.standard_normal(40)
    return Lasso(torch.from_numpy(X), torch.from_numpy(y), 0.1)


def full_gradient_netlasso(problem: NetworkLasso, x: torch.Tensor) -> torch.Tensor:
    return torch.einsum("nrp,nr->np", problem.X, torch.einsum("nrp,np->nr", problem.X, x) - problem.y)


def within_standard_errors(draws: torch.Tensor, exact: torch.Tensor, k: float = 5.0) -> bool:
    """The mean of 1e5 draws equals `exact` within k standard errors per coordinate (the spec's 1e-2 relative
    tolerance is about 1 standard error for the Lasso's heavy-tailed per-sample gradients)."""
    se = draws.std(0) / len(draws) ** 0.5
    return bool(((draws.mean(0) - exact).abs() <= k * se + 1e-12).all())


def test_stochastic_gradients_are_unbiased():
    problem, _ = small_netlasso()
    x = torch.randn(1, *problem.shape, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    draws = problem.stochastic_gradient(x.expand(100_000, *problem.shape), torch.Generator().manual_seed(1))
    exact = full_gradient_netlasso(problem, x[0])
    assert within_standard_errors(draws, exact) and float((draws.mean(0) - exact).norm() / exact.norm()) < 2e-2
    lasso = small_lasso()
    z = torch.randn(1, 6, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    draws = lasso.stochastic_gradient(z.expand(100_000, 6), torch.Generator().manual_seed(3))
    exact = lasso.X.T @ (lasso.X @ z[0] - lasso.y) / len(lasso.y)
    assert within_standard_errors(draws, exact) and float((draws.mean(0) - exact).norm() / exact.norm()) < 2e-2


def test_m_times_one_random_edge_term_is_unbiased_for_g():
    problem, _ = small_netlasso()
    x = torch.randn(*problem.shape, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    terms = problem.lam * torch.linalg.vector_norm(x[problem.edges[:, 0]] - x[problem.edges[:, 1]], dim=-1)
    zero_loss = NetworkLasso(torch.zeros_like(problem.X), torch.zeros_like(problem.y), problem.edges, problem.lam)
    assert math.isclose(len(terms) * float(terms.mean()), float(zero_loss.value(x[None])[0]), rel_tol=1e-12)


def test_rip_with_one_edge_and_zero_loss_merges_the_blocks():
    X, y = torch.zeros(2, 3, 2, dtype=torch.float64), torch.zeros(2, 3, dtype=torch.float64)
    problem = NetworkLasso(X, y, torch.tensor([[0, 1]]), lam=1.0)
    start = torch.tensor([[[1.0, 0.0], [0.0, 1.0]]], dtype=torch.float64)
    problem.zeros = lambda B: start.expand(B, 2, 2).clone()  # start apart instead of at zero
    gaps = []
    for T in (1, 2, 3):
        run = run_prox(problem, torch.tensor([0.3], dtype=torch.float64), T, torch.Generator().manual_seed(0))
        gaps.append(float(torch.linalg.vector_norm(run.last[0, 0] - run.last[0, 1])))
    assert gaps[0] < math.sqrt(2) and gaps[-1] == 0.0  # tau = gamma m lam = 0.3 per step: 2 steps move 1.2 > sqrt 2
    torch.testing.assert_close(run.last[0].sum(0), start[0].sum(0))


def test_proximal_gradient_decreases_monotonically():
    lasso = small_lasso()
    L = float(torch.linalg.eigvalsh(lasso.X.T @ lasso.X / len(lasso.y)).max())
    x, values = torch.zeros(1, 6, dtype=torch.float64), []
    for _ in range(200):
        grad = (x @ lasso.X.T - lasso.y) @ lasso.X / len(lasso.y)
        x = l1_prox(x - grad / L, torch.tensor([lasso.lam / L], dtype=torch.float64))
        values.append(float(lasso.value(x)[0]))
    assert all(b <= a + 1e-15 for a, b in zip(values, values[1:]))
    optimum = lasso_optimum(lasso.X.numpy(), lasso.y.numpy(), lasso.lam)
    assert abs(values[-1] - float(lasso.value(torch.from_numpy(optimum["x"])[None])[0])) < 1e-10


def test_references_are_optimal():
    lasso = small_lasso()
    X, y = lasso.X.numpy(), lasso.y.numpy()
    x = lasso_optimum(X, y, lasso.lam)["x"]
    # subgradient residual: -X^T(Xx - y)/n in lam * d||x||_1
    g = -X.T @ (X @ x - y) / len(y)
    on = x != 0
    assert np.abs(g[on] - lasso.lam * np.sign(x[on])).max() < 1e-5 and (np.abs(g[~on]) <= lasso.lam + 1e-5).all()
    other = lasso_optimum_cvxpy(X, y, lasso.lam)
    values = lasso.value(torch.from_numpy(np.stack([x, other["x"]])))
    assert abs(float(values[0] - values[1])) < 1e-9
    problem, data = small_netlasso()
    reference = network_lasso_optimum(data["X"], data["y"], data["edges"], 1.0)
    x_star = torch.from_numpy(reference["x"])
    f_star = float(problem.value(x_star[None])[0])
    perturbed = x_star + 1e-3 * torch.randn(200, *problem.shape, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    assert float(problem.value(perturbed).min()) >= f_star - 1e-8
    run = run_prox(problem, torch.tensor([horizon_step(0.3, problem.smoothness, 500)] * 2, dtype=torch.float64), 500,
                   torch.Generator().manual_seed(0))
    assert float(run.record_values.min()) >= f_star - 1e-8


def test_generator_edge_counts_and_determinism():
    sizes, p_in, p_out = (10, 17, 18, 18, 12), 0.5, 0.01
    inside = sum(s * (s - 1) // 2 for s in sizes)
    across = 75 * 74 // 2 - inside
    mean = inside * p_in + across * p_out
    sd = math.sqrt(inside * p_in * (1 - p_in) + across * p_out * (1 - p_out))
    counts = [len(network_lasso_data(sizes, 20, 15, np.random.default_rng(s))["edges"]) for s in range(5)]
    assert all(abs(c - mean) <= 3 * sd for c in counts)
    a, b = (network_lasso_data(sizes, 20, 15, np.random.default_rng(7)) for _ in range(2))
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert a["X"].shape == (75, 15, 21) and (a["X"][..., -1] == 1).all()


def test_runs_are_deterministic_and_average_the_iterates():
    lasso = small_lasso()
    gammas = torch.tensor([0.01, 0.05], dtype=torch.float64)
    runs = [run_prox(lasso, gammas, 300, torch.Generator().manual_seed(4)) for _ in range(2)]
    torch.testing.assert_close(runs[0].last, runs[1].last, rtol=0, atol=0)
    assert runs[0].record_steps == log_steps(300, 20) and runs[0].record_steps[-1] == 300
    # the uniform average of x_1..x_T, recomputed step by step with the same draws
    generator, x, total = torch.Generator().manual_seed(4), lasso.zeros(2), torch.zeros(2, 6, dtype=torch.float64)
    for _ in range(300):
        x = lasso.prox_step(x - gammas[:, None] * lasso.stochastic_gradient(x, generator), gammas, generator)
        total += x
    torch.testing.assert_close(runs[0].average, total / 300)
    torch.testing.assert_close(runs[0].last, x)
