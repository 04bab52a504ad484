"""Vectorised numpy runs of the Polyak-type methods on finite-sum convex problems (spec sps_safe §3.4, §6).

Every run of a sweep (methods x their parameters) steps together on the same sample indices (common random
numbers, drawn up front), one row of an (R, d) array per run, with the step-size rules of tasks.optim.polyak.
Plain methods are IMA with lam = 0 (then z = x and the IMA update is x - gamma g exactly), so one update
serves all. The full objective is evaluated once per epoch.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal

import numpy as np
from pydantic import Field, model_validator

from tasks.core.params import Params
from tasks.optim.polyak import (
    LAST_ITERATE,
    check_lam,
    ima_sps_plus_step,
    ima_sps_safe_step,
    ima_update,
    safeguard_active,
    sps_max_step,
    sps_plus_step,
    sps_safe_step,
)

# rule -> (name of its one parameter or None, IMA form, needs the oracle f_i(x*))
RULES = {
    "sgd": ("gamma", False, False),
    "sps_max": ("gamma_b", False, False),
    "sps_plus": (None, False, True),
    "sps_safe": ("M", False, False),
    "ima": ("eta", True, False),
    "ima_sps_safe": ("M", True, False),
    "ima_sps_plus": (None, True, True),
}
RULE_NAMES = tuple(RULES)
SAFEGUARDED = ("sps_safe", "ima_sps_safe")


class Method(Params):
    """One run of a sweep: a rule, its parameter (gamma, gamma_b, M or eta; None for the oracles), SPS_max's c,
    and the IMA weight lam (a constant >= 0 or "t"; plain rules only take 0)."""

    rule: Literal[RULE_NAMES]
    param: float | None = None
    c: float = Field(default=1.0, gt=0)
    lam: float | Literal[LAST_ITERATE] = 0.0

    @model_validator(mode="after")
    def _param_and_lam_fit_the_rule(self):
        name, ima, _ = RULES[self.rule]
        if name is not None and not (self.param is not None and self.param > 0):
            raise ValueError(f"{self.rule}: {name} must be > 0, got {self.param!r}")
        if name is None and self.param is not None:
            raise ValueError(f"{self.rule}: takes no parameter, got {self.param!r}")
        if not ima and self.lam != 0:
            raise ValueError(f"{self.rule}: lam must be 0 (use the ima_ rules for momentum), got {self.lam!r}")
        if ima:
            check_lam(self.lam, f"{self.rule}: lam")
        return self

    @property
    def label(self) -> str:
        """A name safe for files and MLflow metric keys, e.g. sps_safe_M10, ima_sps_safe_M1_lam9, sps_max_gamma_b1_c0.5."""
        name, ima, _ = RULES[self.rule]
        parts = [self.rule] + ([f"{name}{self.param:g}"] if name else []) + ([f"c{self.c:g}"] if self.rule == "sps_max" else [])
        parts += [f"lam{self.lam:g}" if self.lam != LAST_ITERATE else "lamt"] if ima else []
        return "_".join(parts)


@dataclass(frozen=True)
class HingeSVM:
    """f(x) = (1/n) sum_i max(0, 1 - b_i a_i^T x); subgradient -b_i a_i where b_i a_i^T x <= 1 (the reference's kink)."""

    A: np.ndarray  # (n, d)
    b: np.ndarray  # (n,)

    @property
    def n(self) -> int:
        return self.A.shape[0]

    def objective(self, X: np.ndarray) -> np.ndarray:
        """(R, d) -> (R,) full objective."""
        return np.maximum(0.0, 1.0 - (X @ self.A.T) * self.b).mean(axis=1)

    def batch_oracle(self, X: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Mini-batch loss (R,) and subgradient (R, d) at each row of X for the samples idx (B,)."""
        A, b = self.A[idx], self.b[idx]
        margins = (X @ A.T) * b  # (R, B)
        losses = np.maximum(0.0, 1.0 - margins).mean(axis=1)
        return losses, -((margins <= 1.0) * b) @ A / len(idx)


@dataclass
class SweepResult:
    """Per run r (rows) of one sweep; epochs e = 0..E; traced steps every `trace_every`."""

    labels: list[str]
    objective: np.ndarray  # (R, E + 1) f(x) at the end of each epoch (column 0: x0)
    rel_subopt: np.ndarray  # (R, E + 1) (f - f*) / (f(x0) - f*)
    trace_steps: np.ndarray  # (S,)
    step_sizes: np.ndarray  # (R, S)
    grad_norms: np.ndarray  # (R, S) ||g_t||
    safeguard_fraction: np.ndarray  # (R,) share of steps with 0 < ||g||^2 < M (nan: rule has no M)
    zero_grad_steps: np.ndarray  # (R,) steps with g = 0
    x_final: np.ndarray  # (R, d)
    wall_time_s: float


def draw_indices(n: int, batch: int, steps: int, seed: int) -> np.ndarray:
    """(steps, batch) sample indices, uniform with replacement, all drawn up front."""
    return np.random.default_rng(seed).integers(0, n, size=(steps, batch))


class _Steps:
    """The step-size rule of every run, evaluated group by group (one numpy call per rule per step)."""

    def __init__(self, methods: list[Method], ell_star: float):
        self.ell_star = ell_star
        self.groups = {}
        for rule in RULES:
            rows = np.array([r for r, m in enumerate(methods) if m.rule == rule], dtype=int)
            if rows.size:
                self.groups[rule] = (rows, np.array([methods[r].param or 0.0 for r in rows]),
                                     np.array([methods[r].c for r in rows]))

    def __call__(self, losses, grad_norm_sq, inner, oracle_losses) -> np.ndarray:
        steps = np.empty_like(losses)
        for rule, (rows, param, c) in self.groups.items():
            f, q = losses[rows], grad_norm_sq[rows]
            if rule in ("sgd", "ima"):
                steps[rows] = param
            elif rule == "sps_max":
                steps[rows] = sps_max_step(f, q, c, param, self.ell_star)
            elif rule == "sps_safe":
                steps[rows] = sps_safe_step(f, q, param, self.ell_star)
            elif rule == "ima_sps_safe":
                steps[rows] = ima_sps_safe_step(f, q, inner[rows], param, self.ell_star)
            elif rule == "sps_plus":
                steps[rows] = sps_plus_step(f, oracle_losses, q)
            else:  # ima_sps_plus
                steps[rows] = ima_sps_plus_step(f, oracle_losses, q, inner[rows])
        return steps


def _lam_schedule(methods: list[Method]):
    """t -> (R,) lam_t per run."""
    schedule = np.array([m.lam == LAST_ITERATE for m in methods])
    constant = np.array([0.0 if m.lam == LAST_ITERATE else float(m.lam) for m in methods])
    return lambda t: np.where(schedule, float(t), constant)


def iterate(problem: HingeSVM, methods: list[Method], x0: np.ndarray, indices: np.ndarray, *, ell_star: float = 0.0,
            losses_at_optimum: np.ndarray | None = None):
    """Yield (t, X_{t+1}, Z_{t+1}, step sizes, ||g_t||^2) after each step t = 0.. on the batches indices[t].

    losses_at_optimum (n,) = f_i(x*) is needed by the oracle rules only.
    """
    if not methods:
        raise ValueError("methods: need at least one method")
    if losses_at_optimum is None and any(RULES[m.rule][2] for m in methods):
        raise ValueError("losses_at_optimum: the oracle rules (sps_plus, ima_sps_plus) need f_i(x*), got None")
    step_size, lam = _Steps(methods, ell_star), _lam_schedule(methods)
    X = np.tile(np.asarray(x0, dtype=float), (len(methods), 1))
    Z = X.copy()
    for t, idx in enumerate(indices):
        losses, G = problem.batch_oracle(X, idx)
        grad_norm_sq = np.einsum("rd,rd->r", G, G)
        inner = np.einsum("rd,rd->r", G, Z - X)  # 0 for plain runs: z = x
        oracle = losses_at_optimum[idx].mean() if losses_at_optimum is not None else None
        steps = step_size(losses, grad_norm_sq, inner, oracle)
        lam_next = lam(t + 1)[:, None]
        X, Z = ima_update(X, Z, G, steps[:, None], lam_next)
        yield t, X, Z, steps, grad_norm_sq


def run_sweep(problem: HingeSVM, methods: list[Method], *, x0: np.ndarray, f_star: float, epochs: int, batch: int,
              seed: int, ell_star: float = 0.0, losses_at_optimum: np.ndarray | None = None,
              trace_points: int = 256) -> SweepResult:
    """All `methods` for `epochs` epochs of n // batch steps on indices drawn from `seed`."""
    if epochs < 1:
        raise ValueError(f"epochs: must be >= 1, got {epochs}")
    if not 1 <= batch <= problem.n:
        raise ValueError(f"batch: must be in [1, n = {problem.n}], got {batch}")
    per_epoch = problem.n // batch
    steps = epochs * per_epoch
    trace_every = max(1, -(-steps // trace_points))
    R = len(methods)
    M = np.array([m.param if m.rule in SAFEGUARDED else np.nan for m in methods])
    guarded = np.isfinite(M)
    started = time.perf_counter()
    objective = [problem.objective(np.tile(np.asarray(x0, dtype=float), (R, 1)))]
    traced_steps, traced_sizes, traced_norms = [], [], []
    active, zero = np.zeros(R), np.zeros(R)
    X = None
    for t, X, _, sizes, grad_norm_sq in iterate(problem, methods, x0, draw_indices(problem.n, batch, steps, seed),
                                                 ell_star=ell_star, losses_at_optimum=losses_at_optimum):
        active[guarded] += safeguard_active(grad_norm_sq[guarded], M[guarded])
        zero += grad_norm_sq == 0
        if t % trace_every == 0:
            traced_steps.append(t)
            traced_sizes.append(sizes)
            traced_norms.append(np.sqrt(grad_norm_sq))
        if (t + 1) % per_epoch == 0:
            objective.append(problem.objective(X))
    objective = np.stack(objective, axis=1)
    gap0 = objective[:, :1] - f_star
    return SweepResult(labels=[m.label for m in methods], objective=objective, rel_subopt=(objective - f_star) / gap0,
                       trace_steps=np.array(traced_steps), step_sizes=np.stack(traced_sizes, axis=1),
                       grad_norms=np.stack(traced_norms, axis=1),
                       safeguard_fraction=np.where(guarded, active / steps, np.nan), zero_grad_steps=zero,
                       x_final=X, wall_time_s=time.perf_counter() - started)
