"""Per-function summaries of the BBOB runs: the final precision (best f of the last generation - f_opt, the
paper's metric; best-so-far beside it) per variant, as mean over seeds with the seeds' range; average ranks."""
from __future__ import annotations

import numpy as np
import pandas as pd

PRECISION_FLOOR = 1e-12  # for logs and ratios only: IOH's precision can reach 0


RUN = ["variant", "dim", "fid", "seed"]  # the columns that name one BBOB run


def final_rows(table: pd.DataFrame, run: list[str] = RUN) -> pd.DataFrame:
    """Each run's last generation (runs at different population sizes have different numbers of generations);
    BBOB runs get their final precisions."""
    last = table[table.generation == table.groupby(run).generation.transform("max")].copy()
    if "f_opt" in last:
        last["precision"] = last.best_generation - last.f_opt
        last["precision_so_far"] = last.best_so_far - last.f_opt
    return last


def control_returns(control: pd.DataFrame, names: list[str]) -> dict[str, np.ndarray]:
    """variant -> each control seed's best episode return over the whole run, in seed order."""
    final = final_rows(control, ["variant", "seed"])
    by_seed = final.pivot(index="seed", columns="variant", values="best_so_far_return").sort_index()
    return {name: by_seed[name].to_numpy() for name in names}


def per_function(table: pd.DataFrame, names: list[str]) -> list[dict]:
    """One row per (dim, fid): per variant the mean precision over seeds, its min and max, and best-so-far's."""
    rows = []
    for (dim, fid), group in final_rows(table).groupby(["dim", "fid"]):
        row = {"dim": int(dim), "fid": int(fid), "seeds": int(group.seed.nunique())}
        for name in names:
            mine = group[group.variant == name]
            row[f"{name}.precision"] = float(mine.precision.mean())
            row[f"{name}.precision_min"] = float(mine.precision.min())
            row[f"{name}.precision_max"] = float(mine.precision.max())
            row[f"{name}.precision_so_far"] = float(mine.precision_so_far.mean())
        rows.append(row)
    return rows


def seed_precisions(table: pd.DataFrame, names: list[str]) -> dict[tuple[int, int], dict[str, np.ndarray]]:
    """(dim, fid) -> variant -> the final precision of each seed, in seed order: the per-unit data the claims
    resample (seed k ran every variant on IOH instance k + 1 with one sampling seed, so a seed's values are a pair)."""
    out = {}
    for (dim, fid), group in final_rows(table).groupby(["dim", "fid"]):
        by_seed = group.pivot(index="seed", columns="variant", values="precision").sort_index()
        out[(int(dim), int(fid))] = {name: by_seed[name].to_numpy() for name in names}
    return out


def at_dim(rows: list[dict], dim: int) -> list[dict]:
    return [row for row in rows if row["dim"] == dim]


def precisions(rows: list[dict], name: str) -> np.ndarray:
    return np.array([row[f"{name}.precision"] for row in rows])


def count_wins(a: np.ndarray, b: np.ndarray) -> int:
    """Functions on which precision `a` is strictly below `b` (one value per function)."""
    return int(np.sum(a < b))


def median_log10_ratio(a: np.ndarray, b: np.ndarray) -> float:
    """Median over functions of log10(a / b), both floored at PRECISION_FLOOR."""
    return float(np.median(np.log10(np.maximum(a, PRECISION_FLOOR) / np.maximum(b, PRECISION_FLOOR))))


def rank_means(precision: np.ndarray) -> np.ndarray:
    """precision (functions, variants) -> each variant's rank averaged over functions (1 = best, ties share the
    average rank: scipy's rankdata per function, done at once since the bootstrap calls it thousands of times)."""
    below = (precision[:, None, :] < precision[:, :, None]).sum(2)
    tied = (precision[:, None, :] == precision[:, :, None]).sum(2) - 1
    return (1 + below + 0.5 * tied).mean(0)


def wins(rows: list[dict], a: str, b: str) -> int:
    """Functions on which `a`'s mean precision is strictly below `b`'s."""
    return count_wins(precisions(rows, a), precisions(rows, b))


def median_log_ratio(rows: list[dict], a: str, b: str) -> float:
    """Median over functions of log10(precision_a / precision_b) (both floored at PRECISION_FLOOR)."""
    return median_log10_ratio(precisions(rows, a), precisions(rows, b))


def average_ranks(rows: list[dict], names: list[str]) -> dict[str, float]:
    """Average over functions of each variant's rank among `names` (1 = best, ties share the average rank)."""
    ranks = rank_means(np.stack([precisions(rows, name) for name in names], 1))
    return {name: float(rank) for name, rank in zip(names, ranks)}


def headline(rows: list[dict], dim: int) -> dict[str, float]:
    mine = at_dim(rows, dim)
    return {"log10_ratio_md_base": median_log_ratio(mine, "md_j0", "baseline"),
            "log10_ratio_md_cmaes": median_log_ratio(mine, "md_j0", "cmaes"),
            "log10_ratio_md_cmaes_default": median_log_ratio(mine, "md_j0", "cmaes_default")}


def metrics(rows: list[dict], names: list[str]) -> dict[str, float]:
    out = {}
    for row in rows:
        for name in names:
            out[f"d{row['dim']}.f{row['fid']}.{name}.log10_precision"] = float(
                np.log10(max(row[f"{name}.precision"], PRECISION_FLOOR)))
    for dim in sorted({row["dim"] for row in rows}):
        out |= {f"d{dim}.{name}.average_rank": rank for name, rank in average_ranks(at_dim(rows, dim), names).items()}
    return out


def control_metrics(returns: dict[str, np.ndarray]) -> dict[str, float]:
    return {f"acrobot.{name}.mean_best_return": float(values.mean()) for name, values in returns.items()}
