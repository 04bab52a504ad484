"""Per-seed numbers of the traces that the claims read: relative gaps at a budget, first comparisons to a target,
feasibility over every iterate. A budget in comparisons is read for RZO at 2 evaluations per comparison."""
from __future__ import annotations

import numpy as np

EVALUATIONS_PER_QUERY = {"rzo": 2}  # RZO's trace counts function evaluations; a comparison evaluates two points


def value_at(run: dict, key: str, comparisons: float, method: str) -> float:
    """`key` at the last traced iterate within `comparisons` (in the method's own unit)."""
    limit = comparisons * EVALUATIONS_PER_QUERY.get(method, 1)
    within = np.nonzero(run["queries"] <= limit)[0]
    return float(run[key][within[-1]]) if len(within) else float("nan")


def first_hit(run: dict, rel_gap: np.ndarray, target: float) -> float:
    """Comparisons (queries) at the first traced iterate whose relative gap is <= target; inf if never."""
    hit = np.nonzero(rel_gap <= target)[0]
    return float(run["queries"][hit[0]]) if len(hit) else float("inf")


def rayleigh_seed(runs: dict[str, dict], f_star: float, n: int, claim_per_dim: int, target: float) -> dict:
    """method -> {gap_at_claim, gap_at_budget, hit} for one instance (relative gap (f - f*)/(f(x0) - f*))."""
    out = {}
    for method, run in runs.items():
        f0 = runs["rdngd"]["f"][0]
        rel = (run["f"] - f_star) / (f0 - f_star)
        run = run | {"rel": rel}
        gap_at_claim = float(rel[-1]) if method == "rgd" else value_at(run, "rel", claim_per_dim * n, method)
        out[method] = {"gap_at_claim": gap_at_claim, "gap_at_budget": float(rel[-1]),
                       "hit": first_hit(run, rel, target) if method != "rgd" else float("nan"),
                       "wall_time_s": float(run["wall_time_s"])}
    return out


def karcher_seed(runs: dict[str, dict], f_ref: float) -> dict:
    """method -> {rel_gap (final, to the fixed-point reference), min_eig over the traced iterates, increase of f}."""
    return {method: {"rel_gap": float((run["f"][-1] - f_ref) / f_ref), "min_eig": float(np.min(run["min_eig"])),
                     "increase": float(run["f"][-1] - run["f"][0]), "wall_time_s": float(run["wall_time_s"])}
            for method, run in runs.items()}


def rrdngd_phases(loaded: list[tuple[dict, float]]) -> dict:
    """RRDNGD per phase over seeds: lists (phase -> per seed) of the squared distance to the reference, its bound
    D_k and the relative gap; the phase length and the start's squared distance."""
    runs = [run["rrdngd"] for run, _ in loaded]
    return {"dist2": np.column_stack([run["phase_dist2"] for run in runs]).tolist(),
            "bound": runs[0]["D"].tolist(),
            "rel_gap": np.column_stack([(run["phase_f"] - f_ref) / f_ref for run, (_, f_ref) in zip(runs, loaded)]).tolist(),
            "phase_length": int(runs[0]["phase_length"]), "start_dist2": float(runs[0]["start_dist2"])}


def gather(per_seed: list[dict]) -> dict:
    """[method -> field -> value] over seeds to method -> field -> [values]."""
    return {method: {field: [seed[method][field] for seed in per_seed] for field in per_seed[0][method]}
            for method in per_seed[0]}
