"""zovh claim checks C1-C5 of spec §6 (thresholds fixed by the spec before any run; never tuned).

Each is decided on a 95% paired bootstrap interval over seeds (tasks/core/claims.py): a seed's numbers for every
function and estimator or method form one row, resampled together, since they share the seed's quadratic and paths
(Hessian study) or start point and direction stream (descent). A claim "on every function" takes the worst
function's ratio inside each resample.
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable

import numpy as np

from tasks.core.claims import Claim, Gate, Verdict, bootstrap_interval, decide, not_run, on_interval
from tasks.core.seeding import derive_seed

from .experiments import best_lr

C1_FACTOR, C2_FACTOR = 0.5, 0.75
C3_FACTOR, C4_FACTOR, C5_FACTOR = 0.5, 1.1, 3.0
C1_BASELINES = ("s1", "s2", "scd")
C3_FUNCTIONS = ("quadratic", "levy")
REUSE = "zovh_reuse"
PAPER = "paper: qualitative claim only"
BOOTSTRAP_SEED = 0  # fixed: the same data always get the same verdict

Blocks = dict[tuple[str, str], np.ndarray]  # (function, estimator or method) -> per-seed values, (seeds, width)


def mean_errors(rows: list[dict]) -> dict[tuple, float]:
    """Mean Frobenius error over seeds and points per (function, regime, estimator, K)."""
    groups: dict[tuple, list[float]] = defaultdict(list)
    for row in rows:
        groups[row["function"], row["regime"], row["estimator"], int(row["K"])].append(float(row["frob_err"]))
    return {key: float(np.mean(values)) for key, values in groups.items()}


def seed_errors(rows: list[dict]) -> dict[tuple, np.ndarray]:
    """Per (function, regime, estimator, K): the mean Frobenius error over each seed's points, in seed order (every
    seed has the same points, so their mean is mean_errors')."""
    groups: dict[tuple, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        groups[row["function"], row["regime"], row["estimator"], int(row["K"])][int(row["seed"])].append(float(row["frob_err"]))
    return {key: np.array([np.mean(by_seed[s]) for s in sorted(by_seed)]) for key, by_seed in groups.items()}


def _ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None:
        return None
    if b == 0 or not math.isfinite(b):
        return math.inf if a > 0 or not math.isfinite(a) else 1.0
    return a / b


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def _worst(ratios: dict[str, float]) -> float:
    """The largest ratio; nan (undecidable) when a ratio is undefined."""
    return float(np.max([np.nan if r is None else r for r in ratios.values()]))


def worst_over_seeds(cid: str, blocks: Blocks, ratios: Callable[[Blocks], dict[str, float]],
                     gate: Gate) -> tuple[dict[str, float], Callable[[], Verdict]]:
    """(each function's ratio, the verdict on the worst one, to be called where the profile decides): `ratios` maps
    the blocks to a ratio per function; the blocks' seed rows are resampled together (a paired bootstrap)."""
    keys = list(blocks)
    arrays = [np.asarray(blocks[k], dtype=float).reshape(len(blocks[k]), -1) for k in keys]
    rows = np.hstack(arrays)
    cuts = np.cumsum([a.shape[1] for a in arrays])[:-1]

    def worst(resampled: np.ndarray) -> float:
        return _worst(ratios(dict(zip(keys, np.split(resampled, cuts, axis=1)))))

    seed = derive_seed(BOOTSTRAP_SEED, "bootstrap", cid)
    return ratios(dict(zip(keys, arrays))), lambda: on_interval(bootstrap_interval([rows], worst, seed, "seeds"), gate)


def _per_seed(blocks: Blocks) -> dict[str, dict[str, list[float]]]:
    """function -> estimator or method -> its per-seed values, for claims.json."""
    table: dict[str, dict[str, list[float]]] = defaultdict(dict)
    for (fn, name), values in blocks.items():
        table[fn][name] = [float(v) for v in np.ravel(values)]
    return dict(table)


def claim_c1(errors: dict, functions: list[str], K: int, deciding: bool) -> Claim:
    """errors: (function, regime, estimator, K) -> mean error per seed (seed_errors)."""
    blocks = {(fn, est): errors[fn, "near", est, K] for fn in functions for est in ("zovh",) + C1_BASELINES}

    def ratios(b: Blocks) -> dict[str, float]:
        return {fn: _ratio(b[fn, "zovh"].mean(), min(b[fn, x].mean() for x in C1_BASELINES)) for fn in functions}

    by_function, on_worst = worst_over_seeds("C1", blocks, ratios, Gate(high=C1_FACTOR))
    means = {key: float(values.mean()) for key, values in blocks.items()}
    details = {}
    for fn in functions:
        best = min(C1_BASELINES, key=lambda x: means[fn, x])
        details[fn] = {"zovh": means[fn, "zovh"], "best_baseline": best, "best_baseline_error": means[fn, best],
                       **{x: means[fn, x] for x in C1_BASELINES}}
    return Claim("C1", f"R-near, K = {K}: mean ||H_ZoVH - H||_F <= {C1_FACTOR:g} x min(S1, S2, SCD) on every function",
                 f"{PAPER} (ZoVH has the lowest error)", _finite(_worst(by_function)), C1_FACTOR, decide(on_worst, deciding),
                 {"ratios": by_function, "errors": details, "errors_per_seed": _per_seed(blocks),
                  "setting": f"{', '.join(functions)}; R-near; K = {K}"})


def claim_c2(errors: dict, functions: list[str], K: int, deciding: bool) -> Claim:
    blocks = {(fn, est): errors[fn, "near", est, K] for fn in functions for est in (REUSE, "zovh")}

    def ratios(b: Blocks) -> dict[str, float]:
        return {fn: _ratio(b[fn, REUSE].mean(), b[fn, "zovh"].mean()) for fn in functions}

    by_function, on_worst = worst_over_seeds("C2", blocks, ratios, Gate(high=C2_FACTOR))
    return Claim("C2", f"R-near, K = {K}: mean error of ZoVH-reuse <= {C2_FACTOR:g} x ZoVH's on every function",
                 f"{PAPER} (reuse improves sample efficiency at no query cost)", _finite(_worst(by_function)), C2_FACTOR,
                 decide(on_worst, deciding), {"ratios": by_function, "errors_per_seed": _per_seed(blocks),
                           "setting": f"{', '.join(functions)}; R-near; K = {K}"})


def _descent_ratio(summary: dict, functions: list[str], method: str, baseline: str, field: str) -> dict:
    return {fn: _ratio(summary[fn][method][field], summary[fn][baseline][field])
            for fn in functions if fn in summary}


def claim_descent(cid: str, summary: dict, lrs: list[float], baseline: str, factor: float, deciding: bool) -> Claim:
    """summary: function -> method -> {"final_ratio_by_seed": (seeds, lrs), "best_lr", ...} (descent_summary)."""
    functions = [fn for fn in C3_FUNCTIONS if fn in summary]
    blocks = {(fn, m): np.asarray(summary[fn][m]["final_ratio_by_seed"]) for fn in functions for m in (REUSE, baseline)}

    def ratios(b: Blocks) -> dict[str, float]:
        # each method's best lr is picked again in every resample: the pick is part of the statistic
        return {fn: _ratio(best_lr(lrs, b[fn, REUSE])[1], best_lr(lrs, b[fn, baseline])[1]) for fn in functions}

    complete = len(functions) == len(C3_FUNCTIONS)
    if complete:
        by_function, on_worst = worst_over_seeds(cid, blocks, ratios, Gate(high=factor))
        verdict = decide(on_worst, deciding)
    else:
        by_function, verdict = {}, not_run(f"the profile lacks {[fn for fn in C3_FUNCTIONS if fn not in functions]}")
    at_best = {fn: {m: [float(v) for v in blocks[fn, m][:, lrs.index(summary[fn][m]["best_lr"])]]
                    for m in (REUSE, baseline)} for fn in functions}
    return Claim(cid, f"median f(x_T)/f(x_0) of ZoVH-reuse at its best lr <= {factor:g} x {baseline}'s at its best lr "
                      f"(quadratic and Levy)", f"{PAPER} (faster convergence than ZO-SGD / ZoAR)",
                 _finite(_worst(by_function)) if complete else None, factor, verdict,
                 {"ratios": by_function, "final_ratio_per_seed_at_best_lr": at_best,
                  "by_function": {fn: {m: {k: summary[fn][m][k] for k in ("best_lr", "best_median_ratio",
                                                                          "paper_lr_median_ratio")}
                                       for m in (REUSE, baseline)} for fn in summary},
                  "paper_protocol_ratios": _descent_ratio(summary, list(summary), REUSE, baseline,
                                                          "paper_lr_median_ratio"),
                  "setting": "best lr of each method from the same grid (picked again in each resample); the same K "
                             "new queries per iteration for every method (ZO-SGD: K-1 directions + f(theta))"})


def claim_c5(summary: dict, deciding: bool) -> Claim:
    """summary: function -> method -> {"run_wall_per_iteration_by_seed": [...], "wall_per_iteration_s": ...}."""
    functions = list(summary)
    blocks = {(fn, m): np.asarray(summary[fn][m]["run_wall_per_iteration_by_seed"]) for fn in functions
              for m in (REUSE, "zoar")}

    def ratios(b: Blocks) -> dict[str, float]:
        return {fn: _ratio(float(np.median(b[fn, REUSE])), float(np.median(b[fn, "zoar"]))) for fn in functions}

    by_function, on_worst = worst_over_seeds("C5", blocks, ratios, Gate(high=C5_FACTOR))
    controlled = {fn: _ratio(summary[fn][REUSE]["wall_per_iteration_s"], summary[fn]["zoar"]["wall_per_iteration_s"])
                  for fn in functions}
    plain = {fn: _ratio(summary[fn]["zovh"]["wall_per_iteration_s"], summary[fn]["zoar"]["wall_per_iteration_s"])
             for fn in functions if "zovh" in summary[fn]}
    return Claim("C5", f"wall time per iteration of ZoVH-reuse <= {C5_FACTOR:g} x ZoAR's (same buffer)", PAPER,
                 _finite(_worst(by_function)), C5_FACTOR, decide(on_worst, deciding),
                 {"ratios": by_function, "wall_per_iteration_per_seed": _per_seed(blocks),
                  "controlled_ratios": controlled, "zovh_no_reuse_controlled_ratios": plain,
                  "setting": "each descent run's own seconds per iteration (the whole lr grid batched; runs on "
                             "concurrent worker processes), median over seeds per function; controlled_ratios: the "
                             "best of 3 back-to-back timings in one process, a single number per method (no interval)"})


def claims(errors: dict, functions: list[str], K: int, descent: dict, lrs: list[float], deciding: bool) -> list[Claim]:
    """errors: seed_errors of the Hessian study; descent: descent_summary; lrs: the descent study's grid."""
    return [claim_c1(errors, functions, K, deciding), claim_c2(errors, functions, K, deciding),
            claim_descent("C3", descent, lrs, "zo_sgd", C3_FACTOR, deciding),
            claim_descent("C4", descent, lrs, "zoar", C4_FACTOR, deciding), claim_c5(descent, deciding)]
