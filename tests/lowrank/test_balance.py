"""The balancing projection and the synthetic problem's facts."""
from __future__ import annotations

import pytest
import torch

from tasks.lowrank.balance import balance, balance_aligned, balance_by_product_svd, balancing_gap
from tasks.lowrank.synthetic import (Descent, balanced_condition_number, condition_number, factor_descent, hessian,
                                     loss, optimal_loss)

SHAPES = [(20, 20, 4), (4, 9, 4), (12, 6, 3), (30, 7, 5)]


def pair(a, b, r, seed, rank=None):
    g = torch.Generator().manual_seed(seed)
    A = torch.randn(a, r, dtype=torch.float64, generator=g)
    B = torch.randn(r, b, dtype=torch.float64, generator=g)
    if rank is not None:  # a rank-deficient product
        A[:, rank:] = A[:, :1] * 0.5
    return A, B


@pytest.mark.parametrize("a,b,r", SHAPES)
@pytest.mark.parametrize("rank", [None, 1])
def test_product_kept_and_balanced(a, b, r, rank):
    A, B = pair(a, b, r, 0, rank)
    P = A @ B
    for project in (balance, balance_aligned, balance_by_product_svd):
        A2, B2 = project(A, B)
        assert torch.linalg.norm(A2 @ B2 - P) <= 1e-10 * torch.linalg.norm(P)
        assert balancing_gap(A2, B2) <= 1e-10 * torch.linalg.norm(P)
    A2, B2 = balance(A, B)
    sigma = torch.linalg.svdvals(P)[:r]
    assert torch.allclose(A2.T @ A2, torch.diag(sigma), atol=1e-10 * float(sigma[0]))


def test_idempotent_and_equal_to_product_svd():
    A, B = pair(15, 11, 4, 1)
    A1, B1 = balance(A, B)
    A2, B2 = balance(A1, B1)
    assert torch.allclose(A1 @ B1, A2 @ B2, atol=1e-12) and torch.allclose(A1.T @ A1, A2.T @ A2, atol=1e-12)
    R1, R2 = balance_by_product_svd(A, B)
    signs = torch.sign((A1 * R1).sum(0))  # column signs of an SVD are arbitrary
    assert torch.allclose(A1 * signs, R1, atol=1e-10) and torch.allclose(signs[:, None] * B1, R2, atol=1e-10)


@pytest.mark.parametrize("seed", range(5))
def test_aligned_never_farther_than_svd(seed):
    A, B = pair(10, 8, 3, seed)
    distance = lambda X, Y: float(torch.linalg.norm(X - A) ** 2 + torch.linalg.norm(Y - B) ** 2)  # noqa: E731
    assert distance(*balance_aligned(A, B)) <= distance(*balance(A, B)) + 1e-12


def test_zero_product_is_skipped_and_batched():
    A, B = pair(8, 6, 2, 2)
    Az = torch.zeros_like(A)
    A2, B2 = balance(torch.stack([Az, A]), torch.stack([B, B]))
    assert torch.equal(A2[0], Az) and torch.equal(B2[0], B)  # LoRA's init saddle: unchanged
    assert balancing_gap(A2[1], B2[1]) < 1e-10
    assert torch.equal(balance_aligned(Az, B)[1], B)


def test_float32_in_float32_out():
    A, B = pair(16, 12, 4, 3)
    A2, B2 = balance(A.float(), B.float())
    assert A2.dtype == torch.float32 and torch.allclose(A2 @ B2, (A @ B).float(), atol=1e-4)


def test_gd_conserves_the_gram_difference():
    """Gradient flow conserves A^T A - B B^T: with a tiny GD step it drifts by O(eta^2) per step."""
    g = torch.Generator().manual_seed(0)
    T, W0 = torch.randn(20, 20, dtype=torch.float64, generator=g), torch.randn(20, 20, dtype=torch.float64, generator=g)
    A, B = pair(20, 20, 4, 4)
    A, B = 0.3 * A, 0.3 * B
    before = A.T @ A - B @ B.T
    _, A1, B1 = factor_descent(T, W0, A, B, torch.tensor([1e-4]), Descent(200, "gd"))
    drift = torch.linalg.norm(A1[0].T @ A1[0] - B1[0] @ B1[0].T - before) / torch.linalg.norm(before)
    assert drift < 1e-3
    Ab, Bb = balance(A, B)
    _, A2, B2 = factor_descent(T, W0, Ab, Bb, torch.tensor([1e-4]), Descent(200, "gd"))
    assert balancing_gap(A2[0], B2[0]) < 1e-3 * float(torch.linalg.norm(Ab) ** 2)


def test_hessian_at_the_balanced_minimiser():
    g = torch.Generator().manual_seed(5)
    T, W0 = torch.randn(20, 20, dtype=torch.float64, generator=g), torch.randn(20, 20, dtype=torch.float64, generator=g)
    r = 4
    U, S, Vh = torch.linalg.svd(T - W0)
    A, B = U[:, :r] * S[:r].sqrt(), S[:r, None].sqrt() * Vh[:r]  # the balanced global minimiser
    assert abs(float(loss(T, W0, A, B)) - optimal_loss(T, W0, r)) < 1e-9
    eigenvalues = torch.sort(torch.linalg.eigvalsh(hessian(T, W0, A, B))).values
    assert int((eigenvalues.abs() < 1e-9).sum()) == r * r
    assert abs(float(eigenvalues[-1]) - 2 * float(S[0])) < 1e-8
    assert abs(float(eigenvalues[r * r]) - float(S[r - 1] - S[r])) < 1e-8
    kappa = condition_number(eigenvalues, r)
    assert abs(kappa - balanced_condition_number(T, W0, r)) < 1e-8 * kappa
    D = torch.diag(torch.tensor([2.0, 1.0, 1.0, 0.5], dtype=torch.float64))
    unbalanced = torch.linalg.eigvalsh(hessian(T, W0, A @ D, torch.linalg.inv(D) @ B))
    assert condition_number(unbalanced, r) > kappa


def test_descent_is_deterministic_and_balora_keeps_balance():
    g = torch.Generator().manual_seed(6)
    T, W0, B0 = (torch.randn(*s, dtype=torch.float64, generator=g) for s in ((12, 10), (12, 10), (3, 10)))
    A0 = torch.zeros(12, 3, dtype=torch.float64)
    lrs = torch.tensor([0.01, 0.05])
    runs = [factor_descent(T, W0, A0, B0, lrs, Descent(20, "sign", "svd")) for _ in range(2)]
    assert torch.equal(runs[0][0], runs[1][0])
    assert float(balancing_gap(runs[0][1], runs[0][2]).max()) < 1e-10
