"""Proximal maps (spec §10, tests 1-3): against the prox definition solved by cvxpy, against
pyproximal's maps, firm non-expansiveness, the merge branch and the preserved sum u + v."""
from __future__ import annotations

import cvxpy as cp
import numpy as np
import pyproximal
import pytest
import torch

from tasks.prox.maps import edge_prox_l1, edge_prox_l2, euclidean_shrink, l1_prox

RNG = np.random.default_rng(0)


def pair(p: int = 4, scale: float = 1.0):
    return (torch.from_numpy(scale * RNG.standard_normal(p)), torch.from_numpy(scale * RNG.standard_normal(p)))


def prox_by_cvxpy(u: np.ndarray, v: np.ndarray, tau: float, norm: int) -> tuple[np.ndarray, np.ndarray]:
    a, b = cp.Variable(len(u)), cp.Variable(len(v))
    objective = tau * cp.norm(a - b, norm) + 0.5 * cp.sum_squares(a - u) + 0.5 * cp.sum_squares(b - v)
    cp.Problem(cp.Minimize(objective)).solve(solver=cp.CLARABEL)
    return a.value, b.value


@pytest.mark.parametrize("norm,prox", [(2, edge_prox_l2), (1, edge_prox_l1)])
@pytest.mark.parametrize("tau", [0.05, 0.5, 3.0])
def test_edge_prox_is_the_prox_of_its_definition(norm, prox, tau):
    u, v = pair()
    a, b = prox(u, v, torch.tensor(tau, dtype=torch.float64))
    a_ref, b_ref = prox_by_cvxpy(u.numpy(), v.numpy(), tau, norm)
    np.testing.assert_allclose(a.numpy(), a_ref, atol=1e-6)
    np.testing.assert_allclose(b.numpy(), b_ref, atol=1e-6)
    torch.testing.assert_close(a + b, u + v)


def test_edge_prox_merges_close_blocks():
    u, v = pair(scale=0.1)
    tau = float(torch.linalg.vector_norm(u - v)) / 2 + 1e-3
    a, b = edge_prox_l2(u, v, torch.tensor(tau, dtype=torch.float64))
    torch.testing.assert_close(a, b)
    torch.testing.assert_close(a, (u + v) / 2)


def test_edge_prox_against_pyproximal():
    """pyproximal's Euclidean (l2) and L1 maps through the tight-frame rule D = [I, -I], D D^T = 2 I."""
    for _ in range(5):
        u, v = pair(6)
        tau = float(RNG.uniform(0.05, 2.0))
        for ours, theirs in ((edge_prox_l2, pyproximal.Euclidean(sigma=1.0)), (edge_prox_l1, pyproximal.L1(sigma=1.0))):
            delta = (u - v).numpy()
            shrunk = theirs.prox(delta, 2 * tau)
            expected_u = u.numpy() + (shrunk - delta) / 2
            a, b = ours(u, v, torch.tensor(tau, dtype=torch.float64))
            np.testing.assert_allclose(a.numpy(), expected_u, atol=1e-12)
            np.testing.assert_allclose(b.numpy(), v.numpy() - (shrunk - delta) / 2, atol=1e-12)


def test_l1_prox_against_pyproximal_and_identity_at_zero():
    x = torch.from_numpy(RNG.standard_normal((3, 8)))
    taus = torch.tensor([0.0, 0.3, 1.5], dtype=torch.float64)
    ours = l1_prox(x, taus)
    torch.testing.assert_close(ours[0], x[0])
    for k in (1, 2):
        np.testing.assert_allclose(ours[k].numpy(), pyproximal.L1(sigma=1.0).prox(x[k].numpy(), float(taus[k])),
                                   atol=1e-12)
    np.testing.assert_allclose(euclidean_shrink(x[1], torch.tensor(0.7, dtype=torch.float64)).numpy(),
                               pyproximal.Euclidean(sigma=1.0).prox(x[1].numpy(), 0.7), atol=1e-12)


@pytest.mark.parametrize("prox", [edge_prox_l2, edge_prox_l1])
def test_firm_non_expansiveness(prox):
    tau = torch.tensor(0.4, dtype=torch.float64)
    for _ in range(50):
        (u1, v1), (u2, v2) = pair(), pair()
        p1, p2 = torch.cat(prox(u1, v1, tau)), torch.cat(prox(u2, v2, tau))
        a1, a2 = torch.cat([u1, v1]), torch.cat([u2, v2])
        assert float(((p1 - p2) ** 2).sum()) <= float((p1 - p2) @ (a1 - a2)) + 1e-12
    for _ in range(50):
        x = torch.from_numpy(RNG.standard_normal((2, 5)))
        p = l1_prox(x, torch.tensor([0.4, 0.4], dtype=torch.float64))
        assert float(((p[0] - p[1]) ** 2).sum()) <= float((p[0] - p[1]) @ (x[0] - x[1])) + 1e-12
