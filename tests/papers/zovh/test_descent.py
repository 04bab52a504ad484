"""The ZoVH direction (spec zovh §10: Sherman-Morrison, the leave-one-out identity) and the batched descent."""
from __future__ import annotations

import pytest
import torch

from tasks.core.device import single_torch_thread

from tasks.zeroth.descent import descend, zovh_direction
from tasks.zeroth.functions import sphere

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


@pytest.mark.parametrize("kind,histories", [("zo_sgd", 0), ("zoar", 3), ("zovh", 0), ("zovh", 3)])
def test_descent_decreases_the_sphere_and_is_deterministic(kind, histories):
    x0 = torch.ones(20, dtype=torch.float64)
    runs = [descend(sphere, x0, torch.tensor([1e-3, 3e-3], dtype=torch.float64), kind=kind, iterations=100, K=3,
                    mu=0.1, lam=0.1, histories=histories, generator=torch.Generator().manual_seed(0)) for _ in range(2)]
    torch.testing.assert_close(runs[0].values, runs[1].values, rtol=0, atol=0, equal_nan=True)
    assert (runs[0].final < sphere(x0[None])).all()
    assert runs[0].queries_per_iteration == (4 if kind == "zo_sgd" else 3)


def test_guard_drops_only_tiny_denominators():
    U = torch.eye(3, dtype=torch.float64)
    mu, lam = 1.0, 0.1
    # h_0 = -lam (n - 1) / ||u_0||^2 makes the first denominator exactly 0: that term alone is dropped
    F = torch.tensor([[-0.2, 0.1, 0.1]], dtype=torch.float64)
    direction, drops = zovh_direction(U, F, mu, lam)
    assert drops == 1 and torch.isfinite(direction).all()
    _, drops = zovh_direction(U, torch.full((1, 3), float("nan"), dtype=torch.float64), mu, lam)
    assert drops == 0
