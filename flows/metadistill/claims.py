"""metadistill claim checks C1-C3 of spec §6 on the per-function summaries (summaries.py)."""
from __future__ import annotations

import math

from tasks.core.claims import Claim, decided, not_run

from .summaries import at_dim, average_ranks, median_log_ratio, precisions, wins
from .variants import BASELINE, TEACHER, md

# THE CLAIM CHECK (spec §6), fixed by the spec before any run
C1_WINS_OF_24, C1_LOG_RATIO = 14, 0.0
C2_MARGIN = 0.1
C2_VARIANTS = (BASELINE, md(0), md(1))


def claim_c1(rows: list[dict], dim: int, names: list[str], decide: bool) -> Claim:
    mine = at_dim(rows, dim)
    needed = math.ceil(C1_WINS_OF_24 * len(mine) / 24)
    won, ratio = wins(mine, md(0), BASELINE), median_log_ratio(mine, md(0), BASELINE)
    other_dims = sorted({row["dim"] for row in rows} - {dim})
    details = {"setting": f"{len(mine)} BBOB functions (f{mine[0]['fid']}..f{mine[-1]['fid']}), d = {dim}, "
                          "final best-of-generation precision, mean over seeds",
               "functions": len(mine), "wins_needed": needed, "md_j0_wins": won, "median_log10_ratio": ratio,
               "per_function": {f"f{row['fid']}": {n: row[f"{n}.precision"] for n in names} for row in mine},
               "teacher_cmaes": {"md_j0_wins_vs_cmaes": wins(mine, md(0), TEACHER),
                                 "median_log10_ratio_md_j0_vs_cmaes": median_log_ratio(mine, md(0), TEACHER),
                                 "baseline_wins_vs_cmaes": wins(mine, BASELINE, TEACHER)},
               "other_dims": {f"d{d}": {"md_j0_wins": wins(at_dim(rows, d), md(0), BASELINE),
                                        "functions": len(at_dim(rows, d)),
                                        "median_log10_ratio": median_log_ratio(at_dim(rows, d), md(0), BASELINE)}
                              for d in other_dims}}
    return Claim("C1", f"md_j0-LES beats baseline-LES (outer CMA-ES meta-training) on >= {needed}/{len(mine)} BBOB "
                       f"functions and the median log10(prec_md / prec_base) < {C1_LOG_RATIO:g}",
                 "significant improvement over original training (no value accessible)", float(won), float(needed),
                 decided(won >= needed and ratio < C1_LOG_RATIO, decide), details)


def claim_c2(rows: list[dict], dim: int, decide: bool) -> Claim:
    mine = at_dim(rows, dim)
    if not all(f"{n}.precision" in mine[0] for n in C2_VARIANTS):
        return Claim("C2", "SSFT (md_j1) average rank <= md_j0's + 0.1", "SSFT further refines (no value accessible)",
                     None, None, not_run("md_j1 not evaluated in this profile"), {})
    ranks = average_ranks(mine, list(C2_VARIANTS))
    threshold = ranks[md(0)] + C2_MARGIN
    return Claim("C2", f"average rank of md_j1 among {{baseline, md_j0, md_j1}} <= md_j0's + {C2_MARGIN:g}",
                 "SSFT further refines (no value accessible)", ranks[md(1)], threshold,
                 decided(ranks[md(1)] <= threshold, decide),
                 {"setting": f"BBOB, d = {dim}", "average_ranks": ranks, "md_j1_wins_vs_md_j0": wins(mine, md(1), md(0)),
                  "md_j0_wins_vs_md_j1": wins(mine, md(0), md(1)),
                  "identical_functions": int((precisions(mine, md(1)) == precisions(mine, md(0))).sum())})


def claim_c3() -> Claim:
    """Control transfer needs Gymnasium's Acrobot-v1, which is not installed here: reported as not run."""
    return Claim("C3", "Acrobot-v1 neuroevolution: md_j0 mean best return >= baseline - 5",
                 "transfer to control (no value accessible)", None, -5.0,
                 not_run("gymnasium is not installed in this environment (no new packages)"), {"setting": "not run"})


def claims(rows: list[dict], dim: int, names: list[str], decide: bool) -> list[Claim]:
    return [claim_c1(rows, dim, names, decide), claim_c2(rows, dim, decide), claim_c3()]
