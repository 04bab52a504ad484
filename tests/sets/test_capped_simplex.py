"""Spec §10.4: the capped-simplex projection against a brute-force QP (scipy SLSQP)."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.optimize import minimize

from tasks.sets.capped_simplex import project_capped_simplex, total_variation


def brute_force(v: np.ndarray, cap: float) -> np.ndarray:
    n = len(v)
    result = minimize(lambda a: 0.5 * np.sum((a - v) ** 2), np.full(n, 1 / n), jac=lambda a: a - v,
                      bounds=[(0, cap)] * n, constraints=[{"type": "eq", "fun": lambda a: a.sum() - 1}],
                      method="SLSQP", options={"ftol": 1e-14, "maxiter": 500})
    return result.x


@pytest.mark.parametrize("seed", range(6))
def test_agrees_with_slsqp(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 12))
    v = rng.normal(scale=0.5, size=n) / n
    cap = 1 / ((1 - rng.uniform(0, 0.6)) * n)
    ours = project_capped_simplex(torch.tensor(v[None]), cap, steps=60)[0].numpy()
    assert np.allclose(ours, brute_force(v, cap), atol=1e-5)
    assert abs(ours.sum() - 1) < 1e-6 and ours.min() >= 0 and ours.max() <= cap + 1e-12


def test_thirty_steps_are_feasible_to_1e6():
    v = torch.randn(20, 16, dtype=torch.float64)
    cap = torch.linspace(1 / 16, 2 / 16, 20, dtype=torch.float64)
    a = project_capped_simplex(v, cap)
    assert torch.allclose(a.sum(1), torch.ones(20, dtype=torch.float64), atol=1e-6)
    assert (a >= 0).all() and (a <= cap[:, None] + 1e-12).all()


def test_a_feasible_point_is_returned_unchanged():
    a = torch.tensor([[0.1, 0.2, 0.3, 0.4]], dtype=torch.float64)
    assert torch.allclose(project_capped_simplex(a, 0.4), a, atol=1e-6)
    uniform = torch.full((1, 5), 0.2, dtype=torch.float64)
    assert torch.allclose(project_capped_simplex(uniform + torch.randn(1, 5, dtype=torch.float64), 0.2), uniform)


def test_empty_set_is_refused_and_tv():
    with pytest.raises(ValueError, match="cap"):
        project_capped_simplex(torch.zeros(1, 4), 0.2)
    assert float(total_variation(torch.tensor([1.0, 0.0]), torch.tensor([0.5, 0.5]))) == pytest.approx(0.5)
