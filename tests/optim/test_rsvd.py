"""Randomized SVD (spec §3.2 Algorithm 2, §10): exact on low-rank input, within the Halko
bound on a decaying spectrum, orthonormal factors, sketch width capped, bad input named."""
from __future__ import annotations

import pytest
import torch

from tasks.optim.rsvd import LowRank, low_rank_elements, randomized_svd, sketch_width


def with_spectrum(m: int, n: int, singular_values: torch.Tensor, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    U, _ = torch.linalg.qr(torch.randn(m, len(singular_values), generator=g, dtype=torch.float64))
    V, _ = torch.linalg.qr(torch.randn(n, len(singular_values), generator=g, dtype=torch.float64))
    return (U * singular_values) @ V.T


@pytest.mark.parametrize("true_rank,rank", [(1, 1), (3, 4), (4, 4), (6, 10)])
def test_exactly_low_rank_matrix_is_reconstructed(true_rank, rank):
    M = with_spectrum(64, 32, torch.linspace(5.0, 1.0, true_rank, dtype=torch.float64), seed=true_rank)
    approx = randomized_svd(M, rank, oversampling=2, generator=torch.Generator().manual_seed(0))
    assert torch.linalg.norm(M - approx.matrix()) / torch.linalg.norm(M) < 1e-5


def test_decaying_spectrum_error_within_ten_times_the_next_singular_value():
    sigma = 0.7 ** torch.arange(32, dtype=torch.float64)
    M = with_spectrum(64, 48, sigma, seed=1)
    rank = 6
    for seed in range(10):
        approx = randomized_svd(M, rank, oversampling=5, generator=torch.Generator().manual_seed(seed))
        spectral_error = torch.linalg.matrix_norm(M - approx.matrix(), ord=2)
        assert spectral_error >= sigma[rank] * (1 - 1e-9)  # Eckart-Young: no rank-6 matrix does better
        assert spectral_error <= 10 * sigma[rank]


def test_factors_are_orthonormal_and_singular_values_sorted():
    M = torch.randn(40, 70, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    U, S, V = randomized_svd(M, 8, oversampling=5, generator=torch.Generator().manual_seed(0))
    assert U.shape == (40, 8) and S.shape == (8,) and V.shape == (70, 8)
    torch.testing.assert_close(U.T @ U, torch.eye(8, dtype=torch.float64))
    torch.testing.assert_close(V.T @ V, torch.eye(8, dtype=torch.float64))
    assert torch.all(S[:-1] >= S[1:]) and torch.all(S > 0)


def test_sketch_width_is_capped_and_full_rank_is_exact():
    assert sketch_width((64, 32), 4, 2) == 6
    assert sketch_width((64, 32), 30, 5) == 32 and sketch_width((5, 64), 4, 5) == 5
    M = torch.randn(20, 12, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    approx = randomized_svd(M, 12, oversampling=5, generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(approx.matrix(), M)


def test_same_generator_seed_same_factors():
    M = torch.randn(30, 20, generator=torch.Generator().manual_seed(5))
    first = randomized_svd(M, 4, generator=torch.Generator().manual_seed(9))
    second = randomized_svd(M, 4, generator=torch.Generator().manual_seed(9))
    assert all(torch.equal(a, b) for a, b in zip(first, second))


def test_element_count_formula():
    assert low_rank_elements((64, 64), 8) == 128 * 8 + 8
    assert low_rank_elements((256, 64), 4) == 320 * 4 + 4
    approx = LowRank(torch.zeros(256, 4), torch.zeros(4), torch.zeros(64, 4))
    assert sum(t.numel() for t in approx) == low_rank_elements((256, 64), 4)


@pytest.mark.parametrize("shape,rank,oversampling,field", [((8, 6), 0, 2, "rank"), ((8, 6), 7, 2, "rank"),
                                                         ((8, 6), 2, -1, "oversampling"), ((8,), 2, 2, "M")])
def test_bad_input_names_the_field(shape, rank, oversampling, field):
    with pytest.raises(ValueError, match=field):
        randomized_svd(torch.ones(shape), rank, oversampling)
