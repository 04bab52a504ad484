"""Randomized SVD (Halko, Martinsson & Tropp 2011, basic scheme; LiMuon Algorithm 2).

LiMuon keeps its STORM estimator between steps as rank-r factors (U_r, Sigma_r, V_r) of an
m x n matrix: (m + n) r + r numbers instead of m n. The factors come from a Gaussian sketch of
width l = r + s (s = oversampling, capped at min(m, n)), one thin QR and one small exact SVD.
"""
from __future__ import annotations

from typing import NamedTuple

import torch


class LowRank(NamedTuple):
    """M ~ U diag(S) V^T with U: (m, r), S: (r,), V: (n, r); U and V have orthonormal columns."""

    U: torch.Tensor
    S: torch.Tensor
    V: torch.Tensor

    def matrix(self) -> torch.Tensor:
        return (self.U * self.S) @ self.V.T


def sketch_width(shape: tuple[int, int], rank: int, oversampling: int) -> int:
    """l = rank + oversampling, capped at min(m, n) (a wider sketch cannot add information)."""
    return min(rank + oversampling, min(shape))


def low_rank_elements(shape: tuple[int, int], rank: int) -> int:
    """Stored numbers of rank-`rank` factors of an m x n matrix: (m + n) r + r."""
    m, n = shape
    return (m + n) * rank + rank


def check_rank(shape: tuple[int, int], rank: int, oversampling: int) -> None:
    if not 1 <= rank <= min(shape):
        raise ValueError(f"rank: must be in [1, min(m, n) = {min(shape)}] for a {shape[0]}x{shape[1]} matrix, got {rank}")
    if oversampling < 0:
        raise ValueError(f"oversampling: must be >= 0, got {oversampling}")


def randomized_svd(M: torch.Tensor, rank: int, oversampling: int = 5, *,
                   generator: torch.Generator | None = None) -> LowRank:
    """Leading `rank` singular triplets of the 2-D tensor M, approximately (exact when rank(M) <= l).

    The Gaussian test matrix is drawn on `generator`'s device (CPU by default) and moved to M's,
    so a seeded generator gives the same sketch on any device.
    """
    if M.ndim != 2:
        raise ValueError(f"M: must be a 2-D matrix, got shape {tuple(M.shape)}")
    check_rank(tuple(M.shape), rank, oversampling)
    width = sketch_width(tuple(M.shape), rank, oversampling)
    omega = torch.randn(M.shape[1], width, generator=generator, dtype=M.dtype,
                        device=generator.device if generator is not None else "cpu").to(M.device)
    Q, _ = torch.linalg.qr(M @ omega)                       # (m, l) orthonormal basis of the range sketch
    U_small, S, Vh = torch.linalg.svd(Q.T @ M, full_matrices=False)   # (l, n): small exact SVD
    return LowRank((Q @ U_small)[:, :rank], S[:rank], Vh[:rank].T)
