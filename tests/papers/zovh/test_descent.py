"""The ZoVH direction (spec zovh §10: Sherman-Morrison, the leave-one-out identity), the S2 / SCD steps (the
estimators of tasks/zeroth/hessian.py solved by the matrix inversion lemma) and the batched descent at equal
queries per iteration."""
from __future__ import annotations

import pytest
import torch

from tasks.core.device import single_torch_thread

from tasks.zeroth.descent import (KINDS, check_method, descend, lowrank_solve, queries_per_iteration, s2_step,
                                  scd_step, zo_sgd_step, zovh_direction)
from tasks.zeroth.functions import levy, sphere
from tasks.zeroth.hessian import s2, scd

single_torch_thread()  # tiny tensors: a second thread only contends on a loaded machine


def test_sherman_morrison_with_orthogonal_directions():
    d, n, mu, lam = 6, 3, 0.1, 0.1
    generator = torch.Generator().manual_seed(0)
    Q, _ = torch.linalg.qr(torch.randn(d, n, generator=generator, dtype=torch.float64))
    U = Q.T * d ** 0.5
    F = torch.randn(1, n, generator=generator, dtype=torch.float64)
    direction, _ = zovh_direction(U, F, mu, lam, leave_one_out=False)
    w = (F[0] - F[0].mean()) / mu
    g = w @ U / (n - 1)
    H = U.T @ ((w / mu / (n - 1))[:, None] * U)
    expected = torch.linalg.solve(lam * torch.eye(d, dtype=torch.float64) + H, g)
    torch.testing.assert_close(direction[0], expected, rtol=1e-10, atol=1e-12)


def test_leave_one_out_products():
    n, d, mu, lam = 5, 4, 0.2, 0.3
    generator = torch.Generator().manual_seed(1)
    U, F = torch.randn(n, d, generator=generator, dtype=torch.float64), torch.randn(2, n, generator=generator, dtype=torch.float64)
    direction, drops = zovh_direction(U, F, mu, lam)
    for b in range(2):
        w = (F[b] - F[b].mean()) / mu
        h = w / mu
        s = torch.stack([U[i] @ sum(w[j] * U[j] for j in range(n) if j != i) / (n - 2) for i in range(n)])
        c = h / (lam * (n - 1) + h * (U * U).sum(1))
        expected = (w @ U / (n - 1) - (c * s) @ U) / lam
        torch.testing.assert_close(direction[b], expected)
    assert drops == 0


METHODS = [("zo_sgd", 0), ("zoar", 3), ("zovh", 0), ("zovh", 3), ("s2", 0), ("scd", 0)]


@pytest.mark.parametrize("kind,histories", METHODS)
def test_descent_decreases_the_sphere_and_is_deterministic(kind, histories):
    x0 = torch.ones(20, dtype=torch.float64)
    runs = [descend(sphere, x0, torch.tensor([1e-3, 3e-3], dtype=torch.float64), kind=kind, iterations=100, K=3,
                    mu=0.1, lam=0.1, histories=histories, generator=torch.Generator().manual_seed(0)) for _ in range(2)]
    torch.testing.assert_close(runs[0].values, runs[1].values, rtol=0, atol=0, equal_nan=True)
    assert (runs[0].final < sphere(x0[None])).all()
    assert runs[0].queries_per_iteration == 3


class CountingObjective:
    """An objective that counts the points it is asked for (each row of a batch is one query)."""

    def __init__(self, f):
        self.f, self.points = f, 0

    def __call__(self, X: torch.Tensor) -> torch.Tensor:
        self.points += X.numel() // X.shape[-1]
        return self.f(X)


@pytest.mark.parametrize("K", [3, 5])
def test_every_method_spends_the_budget_per_iteration(K):
    """Counted, not declared: each of B runs spends K queries per step; f(theta) recorded at t = 0 and T is the
    only other evaluation (record_every = T)."""
    B, T = 2, 7
    spent = {}
    for kind, histories in METHODS:
        counter = CountingObjective(levy)
        result = descend(counter, torch.zeros(6, dtype=torch.float64), torch.tensor([1e-4, 1e-3], dtype=torch.float64),
                         kind=kind, iterations=T, K=K, mu=0.1, histories=histories,
                         generator=torch.Generator().manual_seed(0), record_every=T)
        spent[kind, histories] = (counter.points - 2 * B) / (B * T)
        assert spent[kind, histories] == result.queries_per_iteration
    assert set(spent.values()) == {K}


def test_scd_at_an_even_budget_spends_one_query_less():
    assert queries_per_iteration("scd", 4) == 3 and queries_per_iteration("zovh", 4) == 4


@pytest.mark.parametrize("kind,K,histories,message", [("newton", 3, 0, "unknown"), ("s2", 3, 2, "cannot reuse"),
                                                      ("scd", 2, 0, "one direction"), ("zovh", 2, 0, "3 pairs")])
def test_impossible_methods_are_refused(kind, K, histories, message):
    with pytest.raises(ValueError, match=message):
        check_method(kind, K, histories)
    assert set(KINDS) == {"zo_sgd", "zoar", "zovh", "s2", "scd"}


@pytest.mark.parametrize("shift", [0.7, -3.0])
def test_matrix_inversion_lemma_equals_the_dense_solve(shift):
    n, d = 3, 7
    generator = torch.Generator().manual_seed(3)
    U = torch.randn(n, d, generator=generator, dtype=torch.float64)
    weights = torch.randn(2, n, generator=generator, dtype=torch.float64)
    rhs = torch.randn(2, d, generator=generator, dtype=torch.float64)
    diagonal = torch.tensor([shift, 2 * shift], dtype=torch.float64)
    solved, drops = lowrank_solve(U, weights, diagonal, rhs, floor=1e-12)
    for b in range(2):
        dense = diagonal[b] * torch.eye(d, dtype=torch.float64) + U.T @ (weights[b][:, None] * U)
        torch.testing.assert_close(solved[b], torch.linalg.solve(dense, rhs[b]), rtol=1e-10, atol=1e-12)
    assert drops == 0


def test_matrix_inversion_lemma_drops_a_vanishing_diagonal():
    U = torch.eye(2, 4, dtype=torch.float64)
    solved, drops = lowrank_solve(U, torch.ones(2, 2, dtype=torch.float64), torch.tensor([0.0, 1.0], dtype=torch.float64),
                                  torch.ones(2, 4, dtype=torch.float64), floor=1e-12)
    assert drops == 1 and (solved[0] == 0).all() and torch.isfinite(solved).all()


@pytest.mark.parametrize("step,estimate,K", [(s2_step, s2, 2), (scd_step, scd, 3)])
def test_plugged_estimators_are_hessian_py_s(step, estimate, K):
    """The s2 / scd descent step is solve(lambda I + H_hat, g_hat) with H_hat the estimator of tasks/zeroth/hessian.py
    on the same directions (same generator), and g_hat the two-point / central-difference gradient."""
    d, mu, lam = 5, 0.1, 0.1
    theta = torch.linspace(-1.0, 1.5, d, dtype=torch.float64)
    H_hat = estimate(levy, theta, K, torch.Generator().manual_seed(4), mu)
    U = H_hat.U
    direction, drops = step(levy, theta[None], U, mu, lam)
    if step is s2_step:
        gradient = ((levy(theta + mu * U) - levy(theta[None])) / (mu * len(U))) @ U
    else:
        gradient = ((levy(theta + mu * U) - levy(theta - mu * U)) / (2 * mu * len(U))) @ U
    expected = torch.linalg.solve(lam * torch.eye(d, dtype=torch.float64) + H_hat.dense(), gradient)
    torch.testing.assert_close(direction[0], expected, rtol=1e-9, atol=1e-12)
    assert drops == 0


def test_zo_sgd_is_the_two_point_gradient_and_s2_preconditions_it():
    """With a huge lambda, (lambda I + H_hat)^{-1} ~ I / lambda: s2's step tends to zo_sgd's over lambda."""
    generator = torch.Generator().manual_seed(5)
    theta, U = torch.randn(2, 6, generator=generator, dtype=torch.float64), torch.randn(2, 6, generator=generator,
                                                                                           dtype=torch.float64)
    plain, _ = zo_sgd_step(sphere, theta, U, 0.1, 0.1)
    lam = 1e9
    preconditioned, _ = s2_step(sphere, theta, U, 0.1, lam)
    torch.testing.assert_close(preconditioned * lam, plain, rtol=1e-6, atol=1e-9)


def test_guard_drops_only_tiny_denominators():
    U = torch.eye(3, dtype=torch.float64)
    mu, lam = 1.0, 0.1
    # h_0 = -lam (n - 1) / ||u_0||^2 makes the first denominator exactly 0: that term alone is dropped
    F = torch.tensor([[-0.2, 0.1, 0.1]], dtype=torch.float64)
    direction, drops = zovh_direction(U, F, mu, lam)
    assert drops == 1 and torch.isfinite(direction).all()
    _, drops = zovh_direction(U, torch.full((1, 3), float("nan"), dtype=torch.float64), mu, lam)
    assert drops == 0
