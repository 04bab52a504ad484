"""Riemannian dueling optimization: minimise f on a manifold from comparisons O(x, y) = sign(f(x) - f(y)) alone.

Key identity: for u uniform on the unit sphere of T_x M (dimension d), E[sign(<g, u>) u] = c_d g / ||g||, with
c_d = Gamma(d/2) / (sqrt(pi) Gamma((d+1)/2)); the comparison of the two probes R_x(+nu u), R_x(-nu u) returns
sign(<grad f, u>) up to an O(L nu) band, so one comparison gives one normalised-gradient direction.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

from .geometry import Geometry, SimplexGeometry
from .oracles import ComparisonOracle
from .trace import Recorder, Result, notify


def direction_constant(d: int) -> float:
    """c_d = E[<g/||g||, u> sign(<g, u>)] for u uniform on S^{d-1}."""
    return float(np.exp(gammaln(d / 2) - gammaln((d + 1) / 2)) / np.sqrt(np.pi))


def normalised_constant(d: int) -> float:
    """c_hat = sqrt(d) c_d, which tends to sqrt(2 / pi) (the third-party reproduction's constant)."""
    return math.sqrt(d) * direction_constant(d)


@dataclass(frozen=True)
class SqrtDecay:
    """eta_t = eta0 / sqrt(t + offset); offset 1 gives eta0 / sqrt(t + 1). A constant step is offset with decay off."""

    eta0: float
    offset: float = 1.0
    decay: bool = True

    def __call__(self, t: int) -> float:
        return self.eta0 / math.sqrt(t + self.offset) if self.decay else self.eta0


def dueling_direction(geometry: Geometry, oracle: ComparisonOracle, x: np.ndarray, nu: float, count: int,
                      rng: np.random.Generator) -> np.ndarray:
    """The unit-length direction estimate: o u for one comparison, (1/m) sum_j o_j u_j renormalised for m.
    o = +1 when the '+u' probe is worse, so the descent step is -eta times this direction."""
    total = np.zeros(geometry.shape)
    for _ in range(count):
        u = geometry.unit_tangent(x, rng)
        total += oracle.worse(geometry.exp(x, nu * u), geometry.exp(x, -nu * u)) * u
    if count == 1:
        return total
    norm = geometry.norm(x, total)
    return total / norm if norm > 0 else total


def rdngd(geometry: Geometry, oracle: ComparisonOracle, x0: np.ndarray, budget: int, step: SqrtDecay, nu: float,
          rng: np.random.Generator, directions: int = 1, record: Recorder | None = None) -> Result:
    """RDNGD: x <- Exp_x(-eta_t * direction) with `directions` comparisons per iteration, until `budget` comparisons.
    Returns the last iterate."""
    start, used0 = time.perf_counter(), oracle.queries
    x, t = np.array(x0, dtype=float), 0
    notify(record, x, 0)
    while oracle.queries - used0 + directions <= budget:
        x = geometry.exp(x, -step(t) * dueling_direction(geometry, oracle, x, nu, directions, rng))
        t += 1
        if notify(record, x, oracle.queries - used0):
            break
    return Result(x, t, oracle.queries - used0, time.perf_counter() - start)


def nonconvex_theory_schedule(horizon: int, d: int, eps: float) -> tuple[SqrtDecay, float]:
    """[3P] nonconvex schedule for ||grad f|| <= eps after `horizon` steps: a constant eta = 1/sqrt(T) and the probe
    nu = c_hat sqrt(2 pi) eps / (4 d)."""
    return SqrtDecay(1 / math.sqrt(horizon), decay=False), normalised_constant(d) * math.sqrt(2 * math.pi) * eps / (4 * d)


def convex_theory_schedule(horizon: int, d: int, eps: float, D: float) -> tuple[SqrtDecay, float]:
    """[3P] geodesically convex schedule for f - f* <= eps, D the squared initial distance bound: a constant
    eta = sqrt(eps) / (4 sqrt(pi d)) and nu = eps^(3/2) / (4 sqrt(2) d (sqrt(D) + eta T)^2)."""
    eta = math.sqrt(eps) / (4 * math.sqrt(math.pi * d))
    return SqrtDecay(eta, decay=False), eps**1.5 / (4 * math.sqrt(2) * d * (math.sqrt(D) + eta * horizon) ** 2)


def rrdngd_phase_length(d: int) -> int:
    """Comparisons per RRDNGD phase, ceil(1 + 64 pi d) (the paper's length for L = alpha = 1 after scaling)."""
    return math.ceil(1 + 64 * math.pi * d)


def rrdngd(geometry: Geometry, oracle: ComparisonOracle, x0: np.ndarray, phases: int, D0: float, alpha: float,
           rng: np.random.Generator, record: Recorder | None = None) -> Result:
    """Restarted RDNGD for a geodesically alpha-strongly convex f, with the proof-consistent schedule: phase k
    starts from the previous phase's last iterate with the squared distance bound D_k = D0 / 2^k, targets
    eps_k = alpha D_k / 4 (which, by strong convexity, leaves a squared distance <= 2 eps_k / alpha = D_{k+1}) and
    runs the convex schedule for rrdngd_phase_length(d) one-comparison steps. extra: per phase D_k, eps_k, eta_k, nu_k
    and the phase's last iterate."""
    start, used0 = time.perf_counter(), oracle.queries
    x, length = np.array(x0, dtype=float), rrdngd_phase_length(geometry.dim)
    notify(record, x, 0)
    log: dict[str, list] = {"D": [], "eps": [], "eta": [], "nu": [], "ends": []}
    for k in range(phases):
        D = D0 / 2**k
        eps = alpha * D / 4
        step, nu = convex_theory_schedule(length, geometry.dim, eps, D)
        for t in range(length):
            x = geometry.exp(x, -step(t) * dueling_direction(geometry, oracle, x, nu, 1, rng))
            notify(record, x, oracle.queries - used0, phase=k)
        for key, value in zip(log, (D, eps, step.eta0, nu, x.copy())):
            log[key].append(value)
    return Result(x, phases * length, oracle.queries - used0, time.perf_counter() - start,
                  {"phase_length": length, **log})


def rdfw_schedule(k: int, d: int, L: float, D: float) -> tuple[int, float]:
    """(m_k, nu_k) of RDFW at iteration k: a batch growing as (k+3), a probe radius shrinking as 1/(k+3)."""
    c_hat = normalised_constant(d)
    return math.ceil(8 * d * L * D**2 * (k + 3) / c_hat**2), math.sqrt(math.pi / 8) * c_hat * 2 / (d * D * (k + 3))


def rdfw(geometry: SimplexGeometry, oracle: ComparisonOracle, x0: np.ndarray, horizon: int, rng: np.random.Generator,
         L: float = 1.0, D: float = math.sqrt(2), record: Recorder | None = None) -> Result:
    """RDFW on a flat constraint set with a linear minimisation oracle: per iteration m_k comparisons give the
    direction estimate g, z_k = LMO(g), x <- Exp_x(s_k Log_x(z_k)) with s_k = 2/(k+3). No projection is made:
    every iterate is a convex combination of feasible points."""
    start, used0 = time.perf_counter(), oracle.queries
    x, projections0 = np.array(x0, dtype=float), geometry.projections
    notify(record, x, 0)
    for k in range(horizon):
        m, nu = rdfw_schedule(k, geometry.dim, L, D)
        U = geometry.unit_tangents(rng, m)
        o = oracle.worse(geometry.exp(x, nu * U), geometry.exp(x, -nu * U))
        g = (o[:, None] * U).mean(axis=0)
        x = geometry.exp(x, 2 / (k + 3) * geometry.log(x, geometry.lmo(x, g)))
        notify(record, x, oracle.queries - used0, iteration=k + 1)
    return Result(x, horizon, oracle.queries - used0, time.perf_counter() - start,
                  {"lmo_calls": horizon, "projections": geometry.projections - projections0})
