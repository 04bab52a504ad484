"""The runs of one instance of E1 (Rayleigh), E2 (Karcher mean) and E3 (RDFW on the simplex): every method on the
same instance and budget, each traced by the true objective (a diagnostic the methods never see).

Budgets: comparisons for the dueling methods; function evaluations for RZO, at 2 per comparison (a comparison
evaluates both probes); iterations of pymanopt's RGD (a first-order reference, not at equal information).
"""
from __future__ import annotations

import numpy as np

from tasks.comparison.dueling import SqrtDecay, nonconvex_theory_schedule, rdfw, rdngd, rrdngd
from tasks.comparison.geometry import SimplexGeometry, SphereGeometry, SPDGeometry
from tasks.comparison.objectives import KarcherCost, Rayleigh, SquaredDistance
from tasks.comparison.oracles import ComparisonOracle, ValueOracle
from tasks.comparison.random_search import dueling_ngd
from tasks.comparison.trace import Tracker
from tasks.comparison.zeroth_order import rgd, rzo
from tasks.core.seeding import derive_seed

from .params import Baselines

DUELING = ("rdngd", "reversed", "euclidean_ngd")  # comparison methods; "reversed" is RDNGD with every answer flipped


def _rng(seed: int, *keys) -> np.random.Generator:
    return np.random.default_rng(derive_seed(seed, *keys))


def _traced(tracker: Tracker, result) -> dict:
    return tracker.arrays() | {"wall_time_s": result.wall_time_s, "iterations": result.iterations}


def run_methods(geometry, cost, euclidean_gradient, metrics: dict, x0: np.ndarray, budget: int, step: SqrtDecay,
                nu: float, baselines: Baselines, seed: int, every: int = 1) -> dict[str, dict]:
    """Every method of E1/E2 from x0: RDNGD, its reversed-oracle control, Euclidean dueling NGD (ambient probes and
    steps mapped back onto the manifold), RZO at 2 x budget evaluations, pymanopt's RGD. Each method draws from its
    own seeded stream."""
    runs = {}
    for method in DUELING:
        tracker = Tracker(metrics, every)
        oracle = ComparisonOracle(cost, rng=_rng(seed, method, "oracle"), reverse=method == "reversed")
        if method == "euclidean_ngd":
            result = dueling_ngd(oracle, x0[None], step, nu, budget, _rng(seed, method), project=geometry.to_manifold,
                                 sample=lambda rng, shape: _ambient_unit(rng, shape, geometry),
                                 record=lambda x, q, info: tracker(x[0], q, info))
        else:
            result = rdngd(geometry, oracle, x0, budget, step, nu, _rng(seed, method), record=tracker)
        runs[method] = _traced(tracker, result)
    d, m = geometry.dim, baselines.rzo_samples
    tracker = Tracker(metrics, max(1, every // (m + 1)))
    result = rzo(geometry, ValueOracle(cost), x0, 2 * budget, baselines.rzo_eta_scale * m / (m + d), baselines.rzo_mu,
                 m, _rng(seed, "rzo"), record=tracker)
    runs["rzo"] = _traced(tracker, result)
    result = rgd(geometry, cost, euclidean_gradient, x0, baselines.rgd_iterations)
    runs["rgd"] = {"queries": np.array([result.iterations]), **{name: np.array([metric(result.x)])
                                                                for name, metric in metrics.items()},
                   "wall_time_s": result.wall_time_s, "iterations": result.iterations}
    return runs


def _ambient_unit(rng: np.random.Generator, shape: tuple, geometry) -> np.ndarray:
    """A direction uniform on the unit sphere of the ambient space (symmetric matrices on SPD), one per chain."""
    z = rng.standard_normal(shape)
    if geometry.name == "spd":
        z = 0.5 * (z + np.swapaxes(z, -1, -2))
    return z / np.linalg.norm(z.reshape(shape[0], -1), axis=1).reshape((-1,) + (1,) * (len(shape) - 1))


def rayleigh_runs(A: np.ndarray, x0: np.ndarray, budget: int, eta0: float, nu: float, baselines: Baselines,
                  seed: int, theory_eps: float | None = None) -> dict[str, dict]:
    """Every E1 method; with `theory_eps` also "rdngd_theory": RDNGD with the [3P] nonconvex schedule for a
    gradient norm <= theory_eps over the whole budget (eta = 1/sqrt(budget), nu from eps)."""
    cost, geometry = Rayleigh(A), SphereGeometry(len(x0))
    metrics = {"f": cost, "grad_norm": lambda x: float(np.linalg.norm(geometry.project_tangent(x, -A @ x))),
               "norm_error": lambda x: abs(float(np.linalg.norm(x)) - 1)}
    runs = run_methods(geometry, cost, cost.euclidean_gradient, metrics, x0, budget, SqrtDecay(eta0), nu, baselines,
                       seed)
    if theory_eps is not None:
        step, theory_nu = nonconvex_theory_schedule(budget, geometry.dim, theory_eps)
        tracker = Tracker(metrics)
        result = rdngd(geometry, ComparisonOracle(cost, rng=_rng(seed, "rdngd_theory", "oracle")), x0, budget, step,
                       theory_nu, _rng(seed, "rdngd_theory"), record=tracker)
        runs["rdngd_theory"] = _traced(tracker, result)
    return runs


def karcher_runs(S: np.ndarray, budget: int, eta0: float, eta_offset: float, nu: float, baselines: Baselines,
                 seed: int, every: int, x_ref: np.ndarray | None = None, rrdngd_phases: int = 0) -> dict[str, dict]:
    """Every E1/E2 method on the Karcher cost from I; with `rrdngd_phases` also RRDNGD (its own budget: phases of
    fixed length), whose initial squared distance bound is the true d(I, x_ref)^2, as the [3P] code plugs in."""
    cost, geometry = KarcherCost(S), SPDGeometry(S.shape[-1])
    metrics = {"f": cost, "grad_norm": lambda X: float(np.linalg.norm(cost.whitened_logs(X)[2])),
               "min_eig": lambda X: float(np.linalg.eigvalsh(X)[0])}
    x0 = np.eye(S.shape[-1])
    runs = run_methods(geometry, cost, cost.euclidean_gradient, metrics, x0, budget, SqrtDecay(eta0, eta_offset), nu,
                       baselines, seed, every)
    if rrdngd_phases:
        runs["rrdngd"] = _rrdngd_run(geometry, cost, metrics, x0, x_ref, rrdngd_phases, seed, every)
    return runs


def _rrdngd_run(geometry, cost, metrics: dict, x0: np.ndarray, x_ref: np.ndarray, phases: int, seed: int,
                every: int) -> dict:
    """RRDNGD with alpha = 1 (the Karcher cost, half the mean squared distance, is 1-strongly geodesically convex on
    SPD, a Hadamard manifold); per phase its bound D_k beside the reached squared distance and objective."""
    tracker = Tracker(metrics, every)
    dist2 = lambda X: float(geometry.manifold.dist(X, x_ref)) ** 2  # noqa: E731
    result = rrdngd(geometry, ComparisonOracle(cost, rng=_rng(seed, "rrdngd", "oracle")), x0, phases, dist2(x0), 1.0,
                    _rng(seed, "rrdngd"), record=tracker)
    ends = result.extra.pop("ends")
    return _traced(tracker, result) | {key: np.asarray(value) for key, value in result.extra.items()} | {
        "phase_f": np.array([float(cost(X)) for X in ends]), "phase_dist2": np.array([dist2(X) for X in ends]),
        "start_dist2": dist2(x0)}


def simplex_run(c: np.ndarray, x0: np.ndarray, horizon: int, L: float, D: float, seed: int,
                f_star: float = 0.0) -> dict:
    """RDFW for `horizon` iterations; the trace holds every iterate's f - f* (f* = 0 when c is inside the simplex,
    else the value at c's projection) and feasibility errors, so the horizons below it are read from its prefix
    (s_k = 2/(k+3) does not depend on T)."""
    cost, geometry = SquaredDistance(c), SimplexGeometry(len(c))
    tracker = Tracker({"subopt": lambda x: float(cost(x)) - f_star, "sum_error": lambda x: abs(float(x.sum()) - 1),
                       "min_x": lambda x: float(x.min())})
    result = rdfw(geometry, ComparisonOracle(cost, rng=_rng(seed, "rdfw", "oracle")), x0, horizon,
                  _rng(seed, "rdfw"), L=L, D=D, record=tracker)
    return _traced(tracker, result) | result.extra
