"""The runs of NCRS and its baselines on batches of active-subspace instances (one chain per instance), traced by
the true gradient norm (a diagnostic the methods never see).

N: comparisons (per chain) until ||grad f|| <= epsilon first holds, inf when the budget ends first. A step is
picked from the grid on calibration instances by the median N (then the median final gradient norm), and frozen
for the evaluation instances, so the evaluation's own outcome never chooses it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tasks.comparison.objectives import ActiveSubspace
from tasks.comparison.oracles import ComparisonOracle, Noise, ValueOracle
from tasks.comparison.random_search import dueling_ngd, ncrs
from tasks.comparison.ranking import cma_es_ranked, one_plus_one
from tasks.core.seeding import derive_seed

TRACE_POINTS = 100
CALIBRATION_OFFSET = 100  # calibration instances are seeds 100, 101, ... (spec §8)


@dataclass
class Instances:
    """A (chains, d, k) stack of orthonormal A, starts x0 = A z0 + w of shape (chains, d)."""

    A: np.ndarray
    x0: np.ndarray


def make_instances(d: int, k: int, seeds: list[int], base: int, z0_scale: float, z0_norm: float | None = None) -> Instances:
    """One instance per seed: x0 = A z0 + w with w Gaussian in the complement of span(A), so A^T x0 = z0 and
    f(x0) = g(z0). z0 comes from a stream without d, so instance s starts at the same reduced point at every ambient
    dimension (C1 compares d on paired instances); A and w come from a stream of (d, k, s)."""
    A, x0 = [], []
    for s in seeds:
        z0 = z0_scale * np.random.default_rng(derive_seed(base, "z0", k, s)).standard_normal(k)
        if z0_norm is not None:  # the k-scaling report: equal starting distance for every k
            z0 *= z0_norm / np.linalg.norm(z0)
        rng = np.random.default_rng(derive_seed(base, "instance", d, k, s))
        a = np.linalg.qr(rng.standard_normal((d, k)))[0]
        w = rng.standard_normal(d)
        A.append(a)
        # a plain Gaussian w would move the reduced start to z0 + A^T w (A^T w ~ N(0, I_k)), differently at each d
        x0.append(a @ z0 + w - a @ (a.T @ w))
    return Instances(np.stack(A), np.stack(x0))


def wrong_probability(p_correct: np.ndarray, votes: int) -> np.ndarray:
    """Probability that a majority of `votes` (odd) independent answers, each correct with probability p_correct,
    is wrong: at most (votes - 1) / 2 correct answers, the binomial sum written out (scipy's cdf costs five times
    as much, once per decision of a 60000-decision run)."""
    correct = np.arange((votes - 1) // 2 + 1)
    weights = np.array([math.comb(votes, j) for j in correct], dtype=float)
    q = np.asarray(p_correct, dtype=float)[..., None]
    return np.sum(weights * q**correct * (1 - q) ** (votes - correct), axis=-1)


class HitRecorder:
    """First comparisons at which each chain's gradient norm is <= epsilon, the best norm so far and a median trace.
    Stops when every chain has hit, unless `full` (the voting runs compare final states at equal comparisons).

    With `judged` = (noise, votes), each accept/reject decision is also judged against the true f: the decision the
    run took (wrong or not), and on that same pair (x_t, candidate) the exact probability that one answer of the
    oracle, and that a majority of `votes` answers, is wrong. Both probabilities are read off the same pairs, so
    their ratio compares the two ways of deciding on identical states and candidates (C3), free of vote sampling."""

    def __init__(self, objective: ActiveSubspace, epsilon: float, budget: int, chains: int, full: bool = False,
                 judged: tuple[Noise, int] | None = None, x0: np.ndarray | None = None):
        self.objective, self.epsilon, self.full, self.judged = objective, epsilon, full, judged
        self.hit = np.full(chains, np.inf)
        self.best = np.full(chains, np.inf)
        self.wrong = np.zeros(chains)
        self.wrong_one, self.wrong_votes = np.zeros(chains), np.zeros(chains)
        self.decided = 0
        self.previous = x0
        self.every = max(1, budget // TRACE_POINTS)
        self.trace_q, self.trace_g = [], []
        self.calls = 0

    def _judge(self, candidate: np.ndarray, accepted: np.ndarray) -> None:
        noise, votes = self.judged
        current, proposed = self.objective(self.previous), self.objective(candidate)
        self.wrong += accepted != (proposed < current)
        p_correct = noise.p_correct(current - proposed)
        self.wrong_one += wrong_probability(p_correct, 1)
        self.wrong_votes += wrong_probability(p_correct, votes)
        self.decided += 1

    def __call__(self, x, queries, info) -> bool:
        if self.judged is not None and "candidate" in info:
            self._judge(info["candidate"], info["accepted"])
        self.previous = x
        g = self.objective.grad_norm(x)
        self.best = np.minimum(self.best, g)
        self.hit = np.where(np.isinf(self.hit) & (g <= self.epsilon), queries, self.hit)
        if self.calls % self.every == 0:
            self.trace_q.append(queries)
            self.trace_g.append(float(np.median(g)))
        self.calls += 1
        return not self.full and bool(np.isfinite(self.hit).all())

    def result(self) -> dict:
        decided = max(self.decided, 1)
        return {"hit": self.hit, "best_grad": self.best, "trace_queries": np.asarray(self.trace_q),
                "trace_grad": np.asarray(self.trace_g), "wrong_fraction": self.wrong / decided,
                "pair_wrong_one": self.wrong_one / decided, "pair_wrong_votes": self.wrong_votes / decided,
                "decisions": self.decided}


def save_instances(path, evaluation: Instances, calibration: Instances) -> None:
    np.savez(path, A=evaluation.A, x0=evaluation.x0, A_calibration=calibration.A, x0_calibration=calibration.x0)


def load_instances(path) -> tuple[Instances, Instances]:
    """(evaluation, calibration) instances as the generate stage saved them."""
    with np.load(path) as data:
        return Instances(data["A"], data["x0"]), Instances(data["A_calibration"], data["x0_calibration"])


def voting_run(inst: Instances, noise: Noise, alpha: float, votes: int, budget: int, epsilon: float, seed: int,
               judge_votes: int) -> dict:
    """NCRS with `votes` votes per decision for the whole budget (no early stop); every decision judged, and on each
    pair the wrong-decision probabilities of one answer and of a majority of `judge_votes`."""
    return run_batch("ncrs", inst, noise, np.full(len(inst.x0), alpha), budget, epsilon, seed, votes=votes, full=True,
                     judge_votes=judge_votes)


def run_batch(method: str, inst: Instances, noise: Noise, steps: np.ndarray, budget: int, epsilon: float, seed: int,
              nu: float = 1e-3, votes: int = 1, full: bool = False, judge_votes: int | None = None) -> dict:
    """One batch of chains (one per instance, step per chain) of `method`: ncrs, ngd (dueling NGD) or exact
    (NCRS with exact comparisons); with `judge_votes` (NCRS) every decision is judged (HitRecorder)."""
    objective = ActiveSubspace(inst.A)
    chains = len(inst.x0)
    judged = None if judge_votes is None else (noise, judge_votes)
    recorder = HitRecorder(objective, epsilon, budget, chains, full=full, judged=judged, x0=inst.x0)
    oracle_rng, method_rng = (np.random.default_rng(derive_seed(seed, method, part)) for part in ("oracle", "method"))
    if method == "exact":
        noise = Noise("exact")
    oracle = ComparisonOracle(objective, noise, oracle_rng)
    if method == "ngd":
        result = dueling_ngd(oracle, inst.x0, steps, nu, budget, method_rng, record=recorder)
    else:
        result = ncrs(oracle, inst.x0, steps, budget, method_rng, votes=votes, record=recorder)
    return recorder.result() | {"queries": result.queries, "wall_time_s": result.wall_time_s}


def pick_step(grid: list[float], hits: np.ndarray, best: np.ndarray) -> tuple[float, list]:
    """The grid point of least median N over its calibration chains (then least median best gradient norm).
    hits, best: (len(grid), calibration chains)."""
    scores = [(float(np.median(h)), float(np.median(b))) for h, b in zip(hits, best)]
    return grid[min(range(len(grid)), key=lambda i: scores[i])], scores


def calibrated_run(method: str, inst: Instances, cal: Instances, noise: Noise, grid: list[float], budget: int,
                   epsilon: float, seed: int, nu: float) -> dict:
    """Calibrate the step on the calibration instances `cal` (the whole grid as one batch), then run the evaluation
    instances `inst` at the picked step."""
    repeat = len(cal.x0)
    batch = Instances(np.tile(cal.A, (len(grid), 1, 1)), np.tile(cal.x0, (len(grid), 1)))
    steps = np.repeat(np.asarray(grid, float), repeat)
    c = run_batch(method, batch, noise, steps, budget, epsilon, derive_seed(seed, "calibrate"), nu)
    step, scores = pick_step(grid, c["hit"].reshape(len(grid), repeat), c["best_grad"].reshape(len(grid), repeat))
    run = run_batch(method, inst, noise, np.full(len(inst.x0), step), budget, epsilon, derive_seed(seed, "evaluate"), nu)
    return run | {"step": step, "calibration_scores": scores}


def library_runs(inst: Instances, cal: Instances, p: float, sigmas: list[float], budget: int, epsilon: float,
                 base: int) -> dict[str, dict]:
    """CMA-ES on comparison ranks (sigma0 calibrated on the grid) and nevergrad's OnePlusOne on exact values, one
    chain at a time; N and the best gradient norm per evaluation instance."""
    def one(method: str, inst: Instances, i: int, sigma: float, seed: int) -> tuple[float, float]:
        objective = ActiveSubspace(inst.A[i])
        recorder = HitRecorder(objective, epsilon, budget, 1)
        record = lambda x, q, info: recorder(np.asarray(x)[None], q, info)
        if method == "cma_es":
            oracle = ComparisonOracle(objective, Noise("margin", p=p), np.random.default_rng(derive_seed(seed, "oracle")))
            cma_es_ranked(oracle, inst.x0[i], sigma, budget, seed % 2**31, record=record)
        else:
            one_plus_one(ValueOracle(objective), inst.x0[i], budget, seed % 2**31, record=record)
        return float(recorder.hit[0]), float(recorder.best[0])

    hits = np.array([[one("cma_es", cal, i, s, derive_seed(base, "cma-calibrate", i)) for i in range(len(cal.x0))]
                     for s in sigmas])
    sigma, scores = pick_step(sigmas, hits[..., 0], hits[..., 1])
    out = {}
    for method, step in (("cma_es", sigma), ("one_plus_one", None)):
        rows = [one(method, inst, i, step, derive_seed(base, method, i)) for i in range(len(inst.x0))]
        out[method] = {"hit": np.array([r[0] for r in rows]), "best_grad": np.array([r[1] for r in rows]),
                       "step": step if step is not None else float("nan")}
    out["cma_es"]["calibration_scores"] = scores
    return out
