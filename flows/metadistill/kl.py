"""The distillation loss: KL(student || teacher) between full-covariance Gaussians, normalised as the released
code normalises it (max-abs scaling of means and covariances, division by d, a soft clip above 10)."""
from __future__ import annotations

import math

import torch

EPS = 1e-6
CLIP = 10.0


def gaussian_kl(mu_p, cov_p, mu_q, cov_q) -> torch.Tensor:
    """KL(N(mu_p, cov_p) || N(mu_q, cov_q)) in closed form."""
    d = mu_p.shape[-1]
    chol_q = torch.linalg.cholesky(cov_q)
    diff = (mu_q - mu_p).unsqueeze(-1)
    trace = torch.cholesky_solve(cov_p, chol_q).diagonal().sum()
    maha = (diff.T @ torch.cholesky_solve(diff, chol_q)).squeeze()
    logdet_q = 2 * torch.log(chol_q.diagonal()).sum()
    return 0.5 * (logdet_q - torch.linalg.slogdet(cov_p)[1] + trace + maha - d)


def positive_definite(cov: torch.Tensor, student: bool) -> torch.Tensor:
    """cov unchanged when PD; else the student's eigenvalues clamped at EPS, the teacher's given + EPS I."""
    if torch.linalg.cholesky_ex(cov).info == 0:
        return cov
    if student:
        values, vectors = torch.linalg.eigh(cov)
        return vectors @ torch.diag(values.clamp_min(EPS)) @ vectors.T
    return cov + EPS * torch.eye(len(cov), dtype=cov.dtype)


def soft_clip(x: torch.Tensor) -> torch.Tensor:
    """x up to 10, then 10 (1 + log(x / 10)): continuous and increasing."""
    return torch.where(x <= CLIP, x, CLIP * (1 + torch.log(torch.clamp(x, min=CLIP) / CLIP)))


def maxabs_normalise(mu_p, cov_p, mu_q, cov_q):
    """Both means divided by max(max|mu_p|, max|mu_q|, 1), both covariances by max(max|cov_p|, max|cov_q|, 1)."""
    scale_mu = torch.clamp(torch.maximum(mu_p.abs().max(), mu_q.abs().max()), min=1.0)
    scale_cov = torch.clamp(torch.maximum(cov_p.abs().max(), cov_q.abs().max()), min=1.0)
    return mu_p / scale_mu, cov_p / scale_cov, mu_q / scale_mu, cov_q / scale_cov


def kl_norm(mu_p, cov_p, mu_q, cov_q) -> torch.Tensor:
    """The loss of one (student population, teacher target) pair."""
    mu_p, cov_p, mu_q, cov_q = maxabs_normalise(mu_p, cov_p, mu_q, cov_q)
    kl = gaussian_kl(mu_p, positive_definite(cov_p, True), mu_q, positive_definite(cov_q, False))
    return soft_clip(kl.clamp_min(0) / mu_p.shape[-1])


def population_gaussian(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean and full covariance of a population (N, d), differentiable."""
    return x.mean(dim=0), torch.atleast_2d(torch.cov(x.T))


def align_index(g: int, interval: int, generations: int) -> int:
    """The teacher generation a student's generation g is matched to: the end of g's segment."""
    return min(math.ceil((g + 1) / interval) * interval - 1, generations - 1)
