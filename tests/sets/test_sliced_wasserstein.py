"""Our weighted SW_2^2 against POT's ot.sliced_wasserstein_distance (squared) on the same directions."""
from __future__ import annotations

import ot
import pytest
import torch

from tasks.sets.sliced_wasserstein import random_directions, sliced_wasserstein_squared


def weights(n: int, generator: torch.Generator) -> torch.Tensor:
    a = torch.rand(n, generator=generator, dtype=torch.float64)
    return a / a.sum()


@pytest.mark.parametrize("seed", range(4))
def test_equals_pot(seed):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(25, 3, generator=g, dtype=torch.float64)
    Y = torch.randn(13, 3, generator=g, dtype=torch.float64) + 0.7
    a, b = weights(25, g), weights(13, g)
    a[[2, 5]] = 0.0  # deleted elements (weight 0), as the adversary makes them
    a = a / a.sum()
    directions = random_directions(3, 50, g, torch.float64)
    ours = float(sliced_wasserstein_squared(X, a, Y, b, directions))
    reference = ot.sliced_wasserstein_distance(X.numpy(), Y.numpy(), a.numpy(), b.numpy(),
                                               projections=directions.numpy()) ** 2
    assert ours == pytest.approx(reference, rel=1e-9, abs=1e-12)


def test_zero_for_the_same_measure_and_differentiable_in_weights():
    g = torch.Generator().manual_seed(0)
    X = torch.randn(10, 2, generator=g, dtype=torch.float64)
    a = weights(10, g).requires_grad_(True)
    directions = random_directions(2, 20, g, torch.float64)
    assert sliced_wasserstein_squared(X, a, X, a.detach(), directions).item() == pytest.approx(0, abs=1e-14)
    Y = torch.randn(7, 2, generator=g, dtype=torch.float64)
    sliced_wasserstein_squared(X, a, Y, torch.full((7,), 1 / 7, dtype=torch.float64), directions).backward()
    assert torch.isfinite(a.grad).all() and a.grad.abs().sum() > 0
