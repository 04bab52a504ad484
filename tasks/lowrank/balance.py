"""The balancing projection of a low-rank factor pair (A, B), A [..., a, r], B [..., r, b], onto the balanced
set {A^T A = B B^T} keeping the product A @ B (notation of the balanced-LoRA paper: A is the left factor).

Every balanced factorisation of P = A B is (U S^1/2 O, O^T S^1/2 V^T) with P = U S V^T and O orthogonal:
`balance` (variant "svd") takes O = I through the polar factors of A and B, never forming the a x b product, with
each singular pair's sign (which an SVD leaves free) chosen to agree with the current pair, so that the factors are
not re-based at every projection under a momentum optimizer; `balance_lapack_signs` (variant "svd_lapack") keeps
the signs LAPACK returns (the authors' callback, which flips columns from one projection to the next);
`balance_aligned` takes the O closest to the current pair (orthogonal Procrustes).
"""
from __future__ import annotations

import torch


def _work_dtype(A: torch.Tensor) -> torch.dtype:
    # SVDs in at least float32, whatever the parameters' dtype
    return torch.promote_types(A.dtype, torch.float32)


def _check_shapes(A: torch.Tensor, B: torch.Tensor) -> None:
    a, r = A.shape[-2:]
    if B.shape[-2] != r:
        raise ValueError(f"B: needs {r} rows to match A's {r} columns, got shape {tuple(B.shape)}")
    if a < r or B.shape[-1] < r:
        raise ValueError(f"A, B: the rank r={r} must not exceed either outer size, got A {tuple(A.shape)}, "
                         f"B {tuple(B.shape)}")


def _keep_where_zero(A, B, A_new, B_new, core):
    """The old pair where the product is exactly zero: balancing would zero both factors (LoRA's init saddle)."""
    zero = (core.abs().amax(dim=(-2, -1)) == 0)[..., None, None]
    return torch.where(zero, A, A_new), torch.where(zero, B, B_new)


def balanced_core(A: torch.Tensor, B: torch.Tensor):
    """(Q_A U_c, S, V_c^T Q_B, C): P = A B = (Q_A U_c) diag(S) (V_c^T Q_B), from the polar factors A = Q_A S_A,
    B = S_B Q_B and the SVD of the r x r core C = S_A S_B = U_c diag(S) V_c^T. Cost O((a + b) r^2 + r^3)."""
    _check_shapes(A, B)
    dtype = _work_dtype(A)
    A, B = A.to(dtype), B.to(dtype)
    Ua, sa, Vah = torch.linalg.svd(A, full_matrices=False)  # A = Ua diag(sa) Vah, Vah r x r
    Ub, sb, Vbh = torch.linalg.svd(B, full_matrices=False)  # B = Ub diag(sb) Vbh, Ub r x r
    Q_A, S_A = Ua @ Vah, Vah.mT @ (sa[..., :, None] * Vah)
    Q_B, S_B = Ub @ Vbh, Ub @ (sb[..., :, None] * Ub.mT)
    core = S_A @ S_B
    Uc, S, Vch = torch.linalg.svd(core)
    return Q_A @ Uc, S, Vch @ Q_B, core


def _balanced_pair(A: torch.Tensor, B: torch.Tensor):
    """(U S^1/2, S^1/2 V^T, core) in the work dtype, with the singular vectors' signs as LAPACK returns them."""
    U, S, Vh, core = balanced_core(A, B)
    root = S.sqrt()
    return U * root[..., None, :], root[..., :, None] * Vh, core


def agreeing_signs(A: torch.Tensor, B: torch.Tensor, A_b: torch.Tensor, B_b: torch.Tensor) -> torch.Tensor:
    """+-1 per singular pair i: the sign that points column i of A_b and row i of B_b the way A's and B's do, i.e.
    the sign flips D minimising ||A_b D - A||^2 + ||D B_b - B||^2 (the aligned variant's Procrustes restricted to
    diagonal +-1, so the columns keep the order of the singular values). Ties (zero agreement) give +1."""
    agreement = (A_b * A).sum(-2) + (B_b * B).sum(-1)
    return torch.where(agreement < 0, -1.0, 1.0).to(A_b.dtype)


def balance(A: torch.Tensor, B: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(U S^1/2, S^1/2 V^T) for A B = U diag(S) V^T (variant "svd", the paper's): same product, A'^T A' = B' B'^T =
    diag(S) in descending order; each singular pair's sign agrees with the current pair (`agreeing_signs`), so a
    balanced pair is returned as it is. Batched over leading dims; a pair whose product is exactly zero is returned
    unchanged."""
    A_b, B_b, core = _balanced_pair(A, B)
    Aw, Bw = A.to(A_b.dtype), B.to(B_b.dtype)
    signs = agreeing_signs(Aw, Bw, A_b, B_b)
    A_new, B_new = _keep_where_zero(Aw, Bw, A_b * signs[..., None, :], signs[..., :, None] * B_b, core)
    return A_new.to(A.dtype), B_new.to(B.dtype)


def balance_lapack_signs(A: torch.Tensor, B: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """`balance` with the singular vectors' signs as LAPACK returns them (the authors' projection callback): the
    same product and Gram matrices, but a column of A (and row of B) may flip sign at any projection."""
    A_b, B_b, core = _balanced_pair(A, B)
    A_new, B_new = _keep_where_zero(A.to(A_b.dtype), B.to(B_b.dtype), A_b, B_b, core)
    return A_new.to(A.dtype), B_new.to(B.dtype)


def balance_aligned(A: torch.Tensor, B: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The balanced pair with A's product closest to (A, B) in Frobenius norm (variant "aligned"): (A_b O, O^T B_b)
    with O the orthogonal polar factor of M = A_b^T A + B_b B^T, (A_b, B_b) = balance(A, B)."""
    A_b, B_b, core = _balanced_pair(A, B)
    Aw, Bw = A.to(A_b.dtype), B.to(B_b.dtype)
    W, _, Zh = torch.linalg.svd(A_b.mT @ Aw + B_b @ Bw.mT)
    O = W @ Zh
    A_new, B_new = _keep_where_zero(Aw, Bw, A_b @ O, O.mT @ B_b, core)
    return A_new.to(A.dtype), B_new.to(B.dtype)


def balance_by_product_svd(A: torch.Tensor, B: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Reference for `balance`: the thin SVD of the a x b product itself (O(a b r) memory and more time)."""
    _check_shapes(A, B)
    r = A.shape[-1]
    U, S, Vh = torch.linalg.svd(A.to(_work_dtype(A)) @ B.to(_work_dtype(A)), full_matrices=False)
    root = S[..., :r].sqrt()
    return (U[..., :r] * root[..., None, :]).to(A.dtype), (root[..., :, None] * Vh[..., :r, :]).to(B.dtype)


VARIANTS = {"svd": balance, "svd_lapack": balance_lapack_signs, "aligned": balance_aligned}


def balancing_gap(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    """||A^T A - B B^T||_F (0 on the balanced set), per leading index."""
    return torch.linalg.matrix_norm(A.mT @ A - B @ B.mT)
