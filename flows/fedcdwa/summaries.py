"""Per (method label, alpha) summaries over seeds: means with 95 % t intervals of global and personalised accuracy
(each run's accuracies are its means over the last rounds), the per-seed accuracies by seed index (the claims pair
them), communication bytes per round, wall time, the share of server steps the validation gate kept."""
from __future__ import annotations

import numpy as np


def label_of(record: dict) -> str:
    return record["method"] + (f"-{record['ablation']}" if record.get("ablation") else "")


def interval(values: list[float]) -> tuple[float, float]:
    """(mean, half-width of the 95 % Student-t interval over seeds; 0 for one seed)."""
    from scipy import stats

    values = np.asarray(values, dtype=float)
    if len(values) < 2:
        return float(values.mean()), 0.0
    return float(values.mean()), float(stats.t.ppf(0.975, len(values) - 1) * values.std(ddof=1) / np.sqrt(len(values)))


def kept_share(records: list[dict]) -> float | None:
    """The share of rounds whose server step was kept (the validation gate), over the runs; None without one."""
    kept = [k for r in records for k in r.get("history", {}).get("server_step_kept", [])]
    return float(np.mean(kept)) if kept else None


def summarize(records: list[dict]) -> dict[tuple[str, float], dict]:
    groups: dict[tuple[str, float], list[dict]] = {}
    for r in records:
        groups.setdefault((label_of(r), float(r["alpha"])), []).append(r)
    table = {}
    for key, rs in sorted(groups.items()):
        rs = sorted(rs, key=lambda r: r["seed_index"])
        g_mean, g_ci = interval([r["global_accuracy"] for r in rs])
        p_mean, p_ci = interval([r["personal_accuracy"] for r in rs])
        table[key] = {"label": key[0], "alpha": key[1], "seeds": len(rs), "global_mean": g_mean, "global_ci95": g_ci,
                      "personal_mean": p_mean, "personal_ci95": p_ci,
                      "seed_indices": [r["seed_index"] for r in rs],
                      "global_by_seed": [r["global_accuracy"] for r in rs],
                      "personal_by_seed": [r["personal_accuracy"] for r in rs],
                      "bytes_up_per_round": float(np.mean([r["bytes_up_per_round"] for r in rs])),
                      "bytes_down_per_round": float(np.mean([r["bytes_down_per_round"] for r in rs])),
                      "wall_time_s": float(np.mean([r["wall_time_s"] for r in rs])),
                      "server_step_kept": kept_share(rs)}
    return table


def value(table: dict, label: str, alpha: float, field: str) -> float | None:
    row = table.get((label, float(alpha)))
    return None if row is None else row[field]


def rows(table: dict) -> list[dict]:
    return [{k: v for k, v in row.items() if not isinstance(v, list)} for row in table.values()]


def flat_metrics(table: dict) -> dict[str, float]:
    return {f"{row['label']}.a{row['alpha']:g}.{field}": row[field] for row in table.values()
            for field in ("global_mean", "personal_mean", "bytes_up_per_round", "bytes_down_per_round")}
