"""prox_last_iterate claim checks (spec §6, thresholds fixed before any run; never tuned).

Each claim is made for every cell (every c, or every (c, T)) and is decided cell by cell on a bootstrap 95% interval
over the sampling seeds (tasks/core/claims.py): it passes when every cell's interval clears the gate, fails when one
cell's interval lies wholly outside, and is inconclusive otherwise (every_cell).

C1: for every c, mean_seeds gap(x_{T_to}) / mean_seeds gap(x_{T_from}) <= 0.5 (Q1 and Q2; spec: T 4000 -> 64000);
    the two horizons draw independently, so each horizon's seeds are resampled on their own.
C2: Q1, for every c and T: mean gap of the last iterate / that of the uniform average <= 1 (both outputs of the same
    runs: a paired bootstrap over seeds), and the last iterate is no worse in >= 80% of the seeds (spec: 4 of 5; an
    exact count of the seeds run).
C3: the rate as a fitted log-log slope of the last iterate's gap against T over the profile's whole horizon grid
    (rates.py): for every (problem, c) the interval <= the slope of the paper's bound ln T / sqrt T fitted over that
    same grid (rates.bound_slope: -0.396 for T 4000..64000, -0.387 for 1000..64000) + C3_TOLERANCE. Any mix
    A / sqrt T + B ln T / sqrt T (A, B >= 0) fits a slope no shallower than ln T / sqrt T alone; the tolerance (our
    choice, fixed before any run of this gate) is for the constant the O(log T) leaves free (ln(T / T0), T0 ~ 14-41
    over our grids). One-sided: a transient faster than the bound agrees with it (README, "How the claims are
    decided").
Report only: Q2's last-vs-average table (the spec expects it mixed).
"""
from __future__ import annotations

import math

import numpy as np

from tasks.core.claims import SMOKE, Claim, Gate, Verdict, bootstrap_interval, exact, not_run, on_interval, worst_part
from tasks.core.seeding import derive_seed

from .params import Q1, Q2, Params
from .rates import bound_slope

C1_FACTOR, C2_FACTOR, C2_SEED_SHARE, C3_TOLERANCE = 0.5, 1.0, 0.8, 0.05
SQRT_RATE = -0.5  # the bound's slope without its log factor


def seed_gaps(runs: dict, params: Params, problem: str, c: float, T: int, output: str = "last") -> np.ndarray:
    """The per-seed gaps of one (problem, c, T) run of `runs` (pipeline.load_runs)."""
    return runs[problem][T][output][:, list(getattr(params, problem).cs).index(c)]


def every_cell(statistics: dict[str, float], verdicts: dict[str, Verdict] | None) -> tuple[str, Verdict]:
    """A claim made for every cell, each gated from above: worst_part over the cells, the largest statistic first.
    Without verdicts (a profile not sized to decide) that cell stands for the claim, undecided."""
    worst_first = sorted(statistics, key=statistics.get, reverse=True)
    if verdicts is None:
        return worst_first[0], not_run(SMOKE)
    return worst_part({cell: verdicts[cell] for cell in worst_first})


def cell_record(statistic: float, verdict: Verdict | None, **units) -> dict:
    """A cell as claims.json shows it: its statistic, interval and word, and the per-seed values behind them."""
    interval = None if verdict is None else verdict.interval
    return {"statistic": statistic, "low": None if interval is None else interval.low,
            "high": None if interval is None else interval.high, "verdict": None if verdict is None else verdict.word,
            **{name: np.asarray(values).tolist() for name, values in units.items()}}


def mean_ratio(numerator: np.ndarray, denominator: np.ndarray) -> float:
    return float(np.mean(numerator) / np.mean(denominator))


def c1_verdicts(samples: dict[str, tuple[np.ndarray, np.ndarray]], params: Params) -> dict[str, Verdict]:
    """Per cell: the two horizons' seeds (independent draws) resampled each on its own."""
    return {cell: on_interval(bootstrap_interval([start, to], lambda a, b: mean_ratio(b, a),
                                                 derive_seed(params.seed, "bootstrap", "C1", cell), "seeds per horizon"),
                              Gate(high=C1_FACTOR))
            for cell, (start, to) in samples.items()}


def claim_c1(runs: dict, params: Params, deciding: bool) -> Claim:
    samples = {}
    for p in (Q1, Q2):
        t_from, t_to = getattr(params, p).rate_pair
        for c in getattr(params, p).cs:
            samples[f"{p}.c{c:g}"] = (seed_gaps(runs, params, p, c, t_from), seed_gaps(runs, params, p, c, t_to))
    ratios = {cell: mean_ratio(to, start) for cell, (start, to) in samples.items()}
    verdicts = c1_verdicts(samples, params) if deciding else None
    cell, verdict = every_cell(ratios, verdicts)
    pairs = {p: list(getattr(params, p).rate_pair) for p in (Q1, Q2)}
    cells = {name: cell_record(ratios[name], (verdicts or {}).get(name), gaps_T_from=start, gaps_T_to=to)
             for name, (start, to) in samples.items()}
    return Claim("C1", f"last iterate: mean F(x_T_to) - F* <= {C1_FACTOR:g} x mean F(x_T_from) - F* for every c "
                       f"(Q1 and Q2)",
                 "O~(1/sqrt T) last-iterate rate (ratio ~0.25 x log factor for T x16)", ratios[cell], C1_FACTOR,
                 verdict, {"deciding_cell": cell, "cells": cells,
                           "setting": "(T_from, T_to): " + "; ".join(f"{p} {a}, {b}" for p, (a, b) in pairs.items())})


def c2_verdicts(pairs: dict[str, np.ndarray], params: Params) -> dict[str, Verdict]:
    """Per cell: the ratio's interval, (last, average) of a seed resampled together."""
    return {cell: on_interval(bootstrap_interval([rows], lambda r: mean_ratio(r[:, 0], r[:, 1]),
                                                 derive_seed(params.seed, "bootstrap", "C2", cell), "seeds"),
                              Gate(high=C2_FACTOR))
            for cell, rows in pairs.items()}


def with_seed_count(cell: str, verdict: Verdict, wins: dict[str, int], needed: int) -> tuple[str, Verdict]:
    """C2's second part, an exact count of the seeds run: a cell where the last iterate is no worse than the average
    in fewer than `needed` seeds fails the claim whatever the ratios say."""
    short = [name for name, won in wins.items() if won < needed]
    if short:
        return short[0], exact(False, f"the last iterate is no worse than the average in fewer than {needed} seeds "
                                      f"at {', '.join(short)}")
    return cell, Verdict(verdict.word, f"{verdict.reason}; the last iterate is no worse in >= {needed} seeds in every "
                                       f"cell (exact count)", verdict.interval)


def claim_c2(runs: dict, params: Params, deciding: bool) -> Claim:
    needed = math.ceil(C2_SEED_SHARE * params.seeds)
    pairs = {f"c{c:g}.T{T}": np.stack([seed_gaps(runs, params, Q1, c, T), seed_gaps(runs, params, Q1, c, T, "average")], 1)
             for T in params.netlasso.horizons for c in params.netlasso.cs}
    ratios = {cell: mean_ratio(rows[:, 0], rows[:, 1]) for cell, rows in pairs.items()}
    wins = {cell: int((rows[:, 0] <= rows[:, 1]).sum()) for cell, rows in pairs.items()}
    verdicts = c2_verdicts(pairs, params) if deciding else None
    cell, verdict = every_cell(ratios, verdicts)
    if deciding:
        cell, verdict = with_seed_count(cell, verdict, wins, needed)
    cells = {name: cell_record(ratios[name], (verdicts or {}).get(name), seeds_last_wins=wins[name], last=rows[:, 0],
                               average=rows[:, 1]) for name, rows in pairs.items()}
    q2 = {f"c{c:g}.T{T}": mean_ratio(seed_gaps(runs, params, Q2, c, T), seed_gaps(runs, params, Q2, c, T, "average"))
          for T in params.lasso_diabetes.horizons for c in params.lasso_diabetes.cs}
    return Claim("C2", f"Q1: mean gap of the last iterate <= the uniform average's for every (c, T), and in >= "
                       f"{needed} of {params.seeds} seeds", "the last iterate often outperforms averaging", ratios[cell],
                 C2_FACTOR, verdict,
                 {"deciding_cell": cell, "cells": cells, "q2_last_over_average_report_only": q2,
                  "setting": "Q1 network Lasso, RIP"})


def c3_gate(fit: dict) -> float:
    """The slope of the noiseless bound ln T / sqrt T over the grid the fit used, plus the tolerance for constants."""
    return bound_slope(fit["horizons"]) + C3_TOLERANCE


def claim_c3(runs: dict, fitted: dict, params: Params, deciding: bool) -> Claim:
    """`fitted`: problem -> c -> output -> rates.slope_fit; the cells' intervals are the last iterate's fits'.
    Each problem's gate comes from its own grid; the deciding cell is the one nearest its gate (or beyond it)."""
    cells = {f"{p}.c{c:g}": (p, c) for p, by_c in fitted.items() for c in by_c}
    fits = {name: fitted[p][c]["last"] for name, (p, c) in cells.items()}
    slopes = {name: fit["slope"] for name, fit in fits.items()}
    gates = {name: c3_gate(fit) for name, fit in fits.items()}
    verdicts = ({name: on_interval(fit["interval"], Gate(high=gates[name])) for name, fit in fits.items()}
                if deciding else None)
    cell, verdict = every_cell({name: slopes[name] - gates[name] for name in cells}, verdicts)
    records = {name: cell_record(slopes[name], (verdicts or {}).get(name),
                                 **{f"gaps_T{T}": seed_gaps(runs, params, p, c, T) for T in getattr(params, p).horizons})
               | {"gate": gates[name], "faster_than_sqrt_T": slopes[name] < SQRT_RATE}
               for name, (p, c) in cells.items()}
    grids = {p: fits[name]["horizons"] for name, (p, _) in cells.items()}
    return Claim("C3", f"fitted log-log slope of the last iterate's gap against T: its 95% interval over seeds <= the "
                       f"slope of ln T / sqrt T over the same grid + {C3_TOLERANCE:g} for every (problem, c)",
                 "O(log T / sqrt T) last-iterate bound", slopes[cell], gates[cell], verdict,
                 {"deciding_cell": cell, "cells": records,
                  "bound_slopes": {p: bound_slope(grid) for p, grid in grids.items()},
                  "average_slopes": {name: fitted[p][c]["average"]["slope"] for name, (p, c) in cells.items()},
                  "setting": "least-squares slope of the mean log gap over each problem's whole horizon grid ("
                             + "; ".join(f"{p} {grid[0]}..{grid[-1]}" for p, grid in grids.items())
                             + "); bootstrap over seeds, resampled per horizon; gate: the bound's slope over that "
                               f"grid + {C3_TOLERANCE:g} (a tolerance for constants, our choice)"})


def claims(runs: dict, fitted: dict, params: Params, deciding: bool) -> list[Claim]:
    return [claim_c1(runs, params, deciding), claim_c2(runs, params, deciding), claim_c3(runs, fitted, params, deciding)]
