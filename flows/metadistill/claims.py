"""metadistill claim checks C1-C3 of spec §6 on the per-function summaries and the per-seed precisions
(summaries.py), and the dimension-transfer rows R1.. (report only).

C1 and C2 are statements about the fixed suite of BBOB functions; what varies from run to run are the seeds (IOH
instance k + 1 with one sampling seed, shared by every variant). So each is decided on a bootstrap 95% interval that
resamples the seeds within each function, a seed's values of all variants together (paired), the functions fixed
(tasks/core/claims.py); the statistic is recomputed from the per-function means over the resampled seeds.
C3 is decided on a paired bootstrap over the control seeds (each seed's md_j0 and baseline runs met the same
episode start states) of the mean difference of their best episode returns.
"""
from __future__ import annotations

import math

import numpy as np

from tasks.core.claims import (Claim, Gate, Verdict, bootstrap_interval, decide, not_run, on_interval, report_only,
                               worst_part)
from tasks.core.seeding import derive_seed

from .summaries import at_dim, average_ranks, count_wins, median_log10_ratio, median_log_ratio, precisions, rank_means, wins
from .variants import BASELINE, TEACHER, TEACHER_DEFAULT, md

# THE CLAIM CHECK (spec §6), fixed by the spec before any run
C1_WINS_OF_24, C1_LOG_RATIO = 14, 0.0
C2_MARGIN = 0.1
C2_VARIANTS = (BASELINE, md(0), md(1))
C3_MARGIN = -5.0  # md_j0's mean best return may trail the baseline's by at most 5 (returns in [-steps, 0])
UNITS = "seeds per function (paired across variants)"


def function_samples(seeds: dict, dim: int, names: tuple[str, ...]) -> list[np.ndarray]:
    """One (seeds, len(names)) array of final precisions per BBOB function at `dim`, in fid order."""
    return [np.stack([by_name[name] for name in names], 1) for (d, _), by_name in sorted(seeds.items()) if d == dim]


def function_means(samples: tuple[np.ndarray, ...]) -> np.ndarray:
    """(functions, variants): each function's mean precision over its seeds (every function has as many)."""
    return np.stack(samples).mean(1)


def md_wins(*samples: np.ndarray) -> float:
    """Functions on which md_j0 (column 0) has the lower mean precision than the baseline (column 1)."""
    means = function_means(samples)
    return float(count_wins(means[:, 0], means[:, 1]))


def md_log_ratio(*samples: np.ndarray) -> float:
    means = function_means(samples)
    return median_log10_ratio(means[:, 0], means[:, 1])


def ssft_rank_gain(*samples: np.ndarray) -> float:
    """md_j1's average rank less md_j0's among (baseline, md_j0, md_j1) (the columns in that order)."""
    ranks = rank_means(function_means(samples))
    return float(ranks[2] - ranks[1])


def part_record(verdict: Verdict) -> dict:
    return {"verdict": verdict.word, "low": verdict.interval.low, "high": verdict.interval.high}


def c1_parts(samples: list[np.ndarray], needed: int, seed: int) -> dict[str, Verdict]:
    """C1's two parts on one set of resamples (one bootstrap seed). Winning more than half of the functions puts the
    median log ratio below 0 in every resample, so the wins decide but for precisions at the floor."""
    return {"wins": on_interval(bootstrap_interval(samples, md_wins, seed, UNITS), Gate(low=needed)),
            "median log10 ratio": on_interval(bootstrap_interval(samples, md_log_ratio, seed, UNITS),
                                              Gate(high=C1_LOG_RATIO))}


def teacher_rows(rows: list[dict], teacher: str) -> dict:
    """The students against one CMA-ES row (report only): wins and md_j0's median log ratio."""
    return {"md_j0_wins_vs_cmaes": wins(rows, md(0), teacher),
            "median_log10_ratio_md_j0_vs_cmaes": median_log_ratio(rows, md(0), teacher),
            "baseline_wins_vs_cmaes": wins(rows, BASELINE, teacher), "functions": len(rows)}


def claim_c1(rows: list[dict], seeds: dict, dim: int, names: list[str], params_seed: int, deciding: bool) -> Claim:
    mine = at_dim(rows, dim)
    needed = math.ceil(C1_WINS_OF_24 * len(mine) / 24)
    samples = function_samples(seeds, dim, (md(0), BASELINE))
    won = md_wins(*samples)
    parts = c1_parts(samples, needed, derive_seed(params_seed, "bootstrap", "C1")) if deciding else {}
    verdict = decide(lambda: worst_part(parts)[1], deciding)
    details = {"setting": f"{len(mine)} BBOB functions (f{mine[0]['fid']}..f{mine[-1]['fid']}), d = {dim}, "
                          "final best-of-generation precision, mean over seeds",
               "functions": len(mine), "wins_needed": needed, "md_j0_wins": int(won),
               "median_log10_ratio": md_log_ratio(*samples),
               "parts": {name: part_record(part) for name, part in parts.items()},
               "per_function": {f"f{row['fid']}": {n: row[f"{n}.precision"] for n in names} for row in mine},
               "per_seed": {f"f{fid}": {name: by_name[name].tolist() for name in (md(0), BASELINE)}
                            for (d, fid), by_name in sorted(seeds.items()) if d == dim},
               "teacher_cmaes": teacher_rows(mine, TEACHER),
               "teacher_cmaes_default": teacher_rows(mine, TEACHER_DEFAULT)}
    return Claim("C1", f"md_j0-LES beats baseline-LES (outer CMA-ES meta-training) on >= {needed}/{len(mine)} BBOB "
                       f"functions and the median log10(prec_md / prec_base) < {C1_LOG_RATIO:g}",
                 "significant improvement over original training (no value accessible)", won, float(needed),
                 verdict, details)


def claim_c2(rows: list[dict], seeds: dict, dim: int, params_seed: int, deciding: bool) -> Claim:
    mine = at_dim(rows, dim)
    if not all(f"{n}.precision" in mine[0] for n in C2_VARIANTS):
        return Claim("C2", "SSFT (md_j1) average rank <= md_j0's + 0.1", "SSFT further refines (no value accessible)",
                     None, None, not_run("md_j1 not evaluated in this profile"), {})
    samples = function_samples(seeds, dim, C2_VARIANTS)
    gain = ssft_rank_gain(*samples)
    verdict = decide(lambda: on_interval(bootstrap_interval(samples, ssft_rank_gain,
                                                            derive_seed(params_seed, "bootstrap", "C2"), UNITS),
                                         Gate(high=C2_MARGIN)), deciding)
    return Claim("C2", f"average rank of md_j1 among {{baseline, md_j0, md_j1}} less md_j0's <= {C2_MARGIN:g}",
                 "SSFT further refines (no value accessible)", gain, C2_MARGIN, verdict,
                 {"setting": f"BBOB, d = {dim}", "average_ranks": average_ranks(mine, list(C2_VARIANTS)),
                  "md_j1_wins_vs_md_j0": wins(mine, md(1), md(0)), "md_j0_wins_vs_md_j1": wins(mine, md(0), md(1)),
                  "identical_functions": int((precisions(mine, md(1)) == precisions(mine, md(0))).sum()),
                  "per_seed_md_j1": {f"f{fid}": by_name[md(1)].tolist()
                                     for (d, fid), by_name in sorted(seeds.items()) if d == dim}})


def mean_difference(pairs: np.ndarray) -> float:
    """Mean over seeds of column 0 less column 1."""
    return float(np.mean(pairs[:, 0] - pairs[:, 1]))


def claim_c3(returns: dict[str, np.ndarray], params_seed: int, deciding: bool) -> Claim:
    """returns: variant -> each control seed's best episode return on Acrobot-v1 (summaries.control_returns)."""
    pairs = np.stack([returns[md(0)], returns[BASELINE]], 1)
    gap = mean_difference(pairs)
    verdict = decide(lambda: on_interval(bootstrap_interval([pairs], mean_difference,
                                                            derive_seed(params_seed, "bootstrap", "C3"),
                                                            "seeds (md_j0 and baseline paired)"),
                                         Gate(low=C3_MARGIN)), deciding)
    return Claim("C3", f"Acrobot-v1 neuroevolution: md_j0's mean best episode return less the baseline's >= "
                       f"{C3_MARGIN:g}", "transfer to control (no value accessible)", gap, C3_MARGIN, verdict,
                 {"setting": f"Acrobot-v1 (numpy), {len(pairs)} seeds, best episode return over the run",
                  "mean_best_return": {name: float(values.mean()) for name, values in returns.items()},
                  "per_seed": {name: values.tolist() for name, values in returns.items()}})


def dimension_transfer(rows: list[dict], seeds: dict, dim: int, trained_dim: int, number: int,
                       params_seed: int) -> Claim:
    """md_j0 against the baseline at an evaluation dimension other than the training one: report only (the spec
    gives no gate there), with C1's two statistics and their bootstrap intervals."""
    mine = at_dim(rows, dim)
    samples = function_samples(seeds, dim, (md(0), BASELINE))
    intervals = {"wins": bootstrap_interval(samples, md_wins, derive_seed(params_seed, "bootstrap", "R", dim), UNITS),
                 "median log10 ratio": bootstrap_interval(samples, md_log_ratio,
                                                          derive_seed(params_seed, "bootstrap", "R", dim, "ratio"),
                                                          UNITS)}
    return Claim(f"R{number}", f"dimension transfer: md_j0-LES vs baseline-LES (both trained at d = {trained_dim}) "
                               f"on {len(mine)} BBOB functions at d = {dim}: functions won (report, no gate)",
                 "d = 30-300 in the paper (no value accessible)", md_wins(*samples), None, report_only(),
                 {"setting": f"d = {dim}, trained at d = {trained_dim}", "functions": len(mine),
                  "median_log10_ratio": md_log_ratio(*samples),
                  "intervals": {name: {"low": i.low, "high": i.high, "method": i.method}
                                for name, i in intervals.items()},
                  "teacher_cmaes": teacher_rows(mine, TEACHER),
                  "teacher_cmaes_default": teacher_rows(mine, TEACHER_DEFAULT)})


def claims(rows: list[dict], seeds: dict, dims: list[int], trained_dim: int, names: list[str], params_seed: int,
           deciding: bool, returns: dict[str, np.ndarray]) -> list[Claim]:
    """rows: summaries.per_function; seeds: summaries.seed_precisions; C1 and C2 at dims[0], a report row per
    further dim; returns: summaries.control_returns."""
    dim = dims[0]
    return [claim_c1(rows, seeds, dim, names, params_seed, deciding), claim_c2(rows, seeds, dim, params_seed, deciding),
            claim_c3(returns, params_seed, deciding)] + [
        dimension_transfer(rows, seeds, other, trained_dim, number, params_seed)
        for number, other in enumerate(dims[1:], start=1)]
