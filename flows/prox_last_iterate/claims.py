"""prox_last_iterate claim checks (spec §6, thresholds fixed before any run; never tuned).

C1: for every c, mean_seeds gap(x_{T_to}) <= 0.5 x mean_seeds gap(x_{T_from}) (Q1 and Q2; spec: T 4000 -> 64000).
C2: Q1, for every c and T: mean gap of the last iterate <= that of the uniform average, and in >= 80% of the seeds
    (spec: 4 of 5).
C3: the rate as a fitted log-log slope of the last iterate's gap against T over the horizon grid: for every
    (problem, c) the upper end of the 95% interval over seeds <= -0.4, i.e. at least the O~(1/sqrt T) rate of the
    paper (slope -1/2) with the log factor's share over the grid (d log log T / d log T = 1/ln T ~ 0.1 at T ~ 1e4).
Report only: Q2's last-vs-average table (the spec expects it mixed).
"""
from __future__ import annotations

import math

from tasks.core.claims import Claim, decided

from .params import Q1, Q2, Params

C1_FACTOR, C2_FACTOR, C2_SEED_SHARE, C3_SLOPE = 0.5, 1.0, 0.8, -0.4


def _row(rows: list[dict], problem: str, c: float, T: int) -> dict:
    return next(r for r in rows if r["problem"] == problem and r["c"] == c and r["T"] == T)


def claim_c1(rows: list[dict], params: Params, decide: bool) -> Claim:
    ratios = {}
    for p in (Q1, Q2):
        runs = getattr(params, p)
        start, end = runs.rate_pair
        for c in runs.cs:
            ratios[f"{p}.c{c:g}"] = _row(rows, p, c, end)["last_gap_mean"] / _row(rows, p, c, start)["last_gap_mean"]
    worst = max(ratios.values())
    pairs = {p: list(getattr(params, p).rate_pair) for p in (Q1, Q2)}
    return Claim("C1", f"last iterate: mean F(x_T_to) - F* <= {C1_FACTOR:g} x mean F(x_T_from) - F* for every c "
                       f"(Q1 and Q2)",
                 "O~(1/sqrt T) last-iterate rate (ratio ~0.25 x log factor for T x16)", worst, C1_FACTOR,
                 decided(worst <= C1_FACTOR, decide, worst), {"ratios": ratios, "setting": "(T_from, T_to): " + "; ".join(f"{p} {a}, {b}" for p, (a, b) in pairs.items())})


def claim_c2(rows: list[dict], params: Params, decide: bool) -> Claim:
    needed = math.ceil(C2_SEED_SHARE * params.seeds)
    cells = {f"c{r['c']:g}.T{r['T']}": {"ratio": r["last_gap_mean"] / r["average_gap_mean"],
                                         "last": r["last_gap_mean"], "average": r["average_gap_mean"],
                                         "seeds_last_wins": r["last_beats_average_seeds"]}
             for r in rows if r["problem"] == Q1}
    worst = max(cell["ratio"] for cell in cells.values())
    ok = worst <= C2_FACTOR and all(cell["seeds_last_wins"] >= needed for cell in cells.values())
    q2 = {f"c{r['c']:g}.T{r['T']}": r["last_gap_mean"] / r["average_gap_mean"] for r in rows if r["problem"] == Q2}
    return Claim("C2", f"Q1: mean gap of the last iterate <= the uniform average's for every (c, T), and in >= "
                       f"{needed} of {params.seeds} seeds", "the last iterate often outperforms averaging", worst,
                 C2_FACTOR, decided(ok, decide, worst),
                 {"cells": cells, "q2_last_over_average_report_only": q2, "setting": "Q1 network Lasso, RIP"})


def claim_c3(fitted: dict, decide: bool) -> Claim:
    fits = {f"{p}.c{c:g}": by_output["last"] for p, by_c in fitted.items() for c, by_output in by_c.items()}
    highs = [fit["high"] for fit in fits.values()]
    worst = None if any(h is None for h in highs) else max(highs)
    return Claim("C3", f"fitted log-log slope of the last iterate's gap against T: upper end of the 95% interval over "
                       f"seeds <= {C3_SLOPE:g} for every (problem, c)", "O~(1/sqrt T): slope -1/2 up to log factors",
                 worst, C3_SLOPE, decided(worst is not None and worst <= C3_SLOPE, decide, worst),
                 {"fits": fits, "average_fits": {f"{p}.c{c:g}": b["average"] for p, by_c in fitted.items()
                                                 for c, b in by_c.items()},
                  "setting": "least-squares slope per seed over the horizon grid; Student-t interval"})


def claims(rows: list[dict], fitted: dict, params: Params, decide: bool) -> list[Claim]:
    return [claim_c1(rows, params, decide), claim_c2(rows, params, decide), claim_c3(fitted, decide)]
