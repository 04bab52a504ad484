"""The typed params of riemannian_dueling: one profile of stages/riemannian_dueling/params.yaml."""
from __future__ import annotations

from typing import Annotated

from pydantic import Field

from tasks.core.params import Params as BaseParams

Positive = Annotated[float, Field(gt=0)]


class Baselines(BaseParams):
    """RZO (function values: samples m, smoothing mu; its step is eta_scale * m / (m + d), our choice) and
    pymanopt's RGD (gradients, a reference) for `rgd_iterations`."""

    rzo_samples: int = Field(ge=1)
    rzo_mu: Positive
    rzo_eta_scale: Positive
    rgd_iterations: int = Field(ge=1)


class Rayleigh(BaseParams):
    """E1: -x^T A x / 2 on S^{n-1}, eigengap `gap`; one instance (A, x0) per seed; runs of budget_per_dim * n
    comparisons; C1 reads the gap after claim_per_dim * n; C2 the comparisons B(n) to reach `target`; with
    `theory_eps`, RDNGD with the theory schedule (eta = 1/sqrt(T), nu from eps) runs beside, reported only."""

    dims: list[Annotated[int, Field(ge=2, le=2000)]] = Field(min_length=1)
    seeds: int = Field(ge=1)
    gap: Positive
    budget_per_dim: int = Field(ge=1)
    claim_per_dim: int = Field(ge=1)
    target: Positive
    eta0: Positive
    nu: Positive
    baselines: Baselines
    theory_eps: float | None = Field(default=None, gt=0)  # also run RDNGD with the [3P] nonconvex schedule for it


class KarcherCase(BaseParams):
    """One E2 size; `rrdngd_phases` > 0 also runs RRDNGD for that many phases of ceil(1 + 64 pi d) comparisons."""

    n: int = Field(ge=2, le=50)
    m: int = Field(ge=1, le=500)
    budget: int = Field(ge=1)
    rrdngd_phases: int = Field(default=0, ge=0, le=30)


class Karcher(BaseParams):
    """E2: Karcher mean of m SPD matrices; eta_t = eta0 / sqrt(t + eta_offset), probe nu, from X0 = I."""

    cases: list[KarcherCase] = Field(min_length=1)
    seeds: int = Field(ge=1)
    eta0: Positive
    eta_offset: float = Field(ge=1)
    nu: Positive
    trace_every: int = Field(ge=1)
    baselines: Baselines


class Simplex(BaseParams):
    """E3: RDFW on ||x - c||^2 / 2 over the simplex in R^n, c = (1..n)/sum; the [3P] schedules with L and D."""

    n: int = Field(ge=2, le=1000)
    horizons: list[Annotated[int, Field(ge=1, le=1000)]] = Field(min_length=1)
    seeds: int = Field(ge=1)
    L: Positive
    D: Positive


class Params(BaseParams):
    seed: int = Field(ge=0)
    rayleigh: Rayleigh
    karcher: Karcher
    simplex: Simplex
    decide_claims: bool
