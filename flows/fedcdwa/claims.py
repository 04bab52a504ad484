"""fedcdwa claim checks C1-C3 (spec §6), thresholds fixed by the spec before any run, decided on bootstrap intervals
over seeds. Every method of a seed index runs on the same split and initial seed, so the methods' accuracies of one
seed index are paired. Accuracies are compared in points (1 point = 0.01)."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tasks.core.claims import Claim, Gate, Verdict, all_hold, bootstrap_interval, decide, not_run, on_interval
from tasks.core.seeding import derive_seed

from .summaries import value

HARD, MILD = 0.1, 1.0  # the alphas the claims name: most and least heterogeneous
C1_MARGIN = 1.0  # points: FedCDWA global >= FedAvg global + 1
C2_SLACK, C2_MARGIN = 0.5, 2.0  # personal >= max(FedAvg, FedProto) - 0.5 and >= FedAvg + 2
C3_GATE = 0.0  # points: FedCDWA's drop - FedAvg's drop <= 0
POINTS = 100.0


def per_seed(table: dict, labels: tuple[str, ...], alpha: float, accuracy: str) -> np.ndarray | None:
    """One row per seed index that every label ran at `alpha`, one column per label: `accuracy` ("global" or
    "personal") in points; None when no seed index has runs of every label there."""
    rows = [table.get((label, float(alpha))) for label in labels]
    if any(row is None for row in rows):
        return None
    by_seed = [dict(zip(row["seed_indices"], row[f"{accuracy}_by_seed"])) for row in rows]
    common = sorted(set.intersection(*(set(seeds) for seeds in by_seed)))
    return POINTS * np.array([[seeds[s] for seeds in by_seed] for s in common]) if common else None


def mean_gain(pairs: np.ndarray) -> float:
    """Mean over seeds of column 0 - column 1."""
    return float(np.mean(pairs[:, 0] - pairs[:, 1]))


def gain_over_best(triples: np.ndarray) -> float:
    """Mean of column 0 - the larger of the other columns' means (the better baseline on average)."""
    return float(np.mean(triples[:, 0]) - np.max(np.mean(triples[:, 1:], axis=0)))


def drop_difference(mild: np.ndarray, hard: np.ndarray) -> float:
    """(FedCDWA's drop - FedAvg's drop) from the mild to the hard alpha, with (FedCDWA, FedAvg) rows per alpha."""
    return mean_gain(mild) - mean_gain(hard)


def _bootstrap_seed(seed: int, *keys) -> int:
    return derive_seed(seed, "bootstrap", *keys)


def _hard(alphas: list[float]) -> float:
    """The alpha of C1 and C2: 0.1, or the profile's smallest where it lacks 0.1 (computed, not decided)."""
    return HARD if HARD in alphas else min(alphas)


def _decide(verdict: Callable[[], Verdict], deciding: bool, alphas: list[float], needed: tuple[float, ...]) -> Verdict:
    """`decide`, and undecided where the profile lacks an alpha the claim names."""
    missing = [a for a in needed if a not in alphas]
    if deciding and missing:
        return not_run(f"the profile lacks alpha = {', '.join(f'{a:g}' for a in missing)}")
    return decide(verdict, deciding)


def _by_method(table: dict, alpha: float) -> dict:
    """Every method's (and ablation's) mean and 95 % interval at `alpha`, with communication bytes."""
    return {row["label"]: {k: row[k] for k in ("global_mean", "global_ci95", "personal_mean", "personal_ci95",
                                               "bytes_up_per_round", "bytes_down_per_round", "seeds")}
            for row in table.values() if row["alpha"] == alpha}


def claim_c1(table: dict, alphas: list[float], deciding: bool, seed: int) -> Claim:
    alpha = _hard(alphas)
    pairs = per_seed(table, ("fedcdwa", "fedavg"), alpha, "global")
    gain = None if pairs is None else mean_gain(pairs)

    def verdict() -> Verdict:
        if gain is None:
            return not_run(f"FedCDWA or FedAvg has no runs at alpha = {alpha:g}")
        found = bootstrap_interval([pairs], mean_gain, _bootstrap_seed(seed, "C1"), "seeds")
        return on_interval(found, Gate(low=C1_MARGIN))

    return Claim("C1", f"global accuracy: FedCDWA >= FedAvg + {C1_MARGIN:g} point (mean over seeds)",
                 "better global accuracy (no numbers published)", gain, C1_MARGIN,
                 _decide(verdict, deciding, alphas, (HARD,)),
                 {"setting": f"alpha = {alpha:g}", "unit": "points",
                  "per_seed": None if pairs is None else {"fedcdwa": pairs[:, 0].tolist(), "fedavg": pairs[:, 1].tolist()},
                  "fedcdwa": value(table, "fedcdwa", alpha, "global_mean"),
                  "fedavg": value(table, "fedavg", alpha, "global_mean"), "by_method": _by_method(table, alpha)})


def claim_c2(table: dict, alphas: list[float], deciding: bool, seed: int) -> Claim:
    alpha = _hard(alphas)
    triples = per_seed(table, ("fedcdwa", "fedavg", "fedproto"), alpha, "personal")
    found = triples is not None
    margin_best = gain_over_best(triples) if found else None
    margin_fedavg = mean_gain(triples[:, :2]) if found else None

    def verdict() -> Verdict:
        if not found:
            return not_run(f"FedCDWA, FedAvg or FedProto has no runs at alpha = {alpha:g}")
        near_best = bootstrap_interval([triples], gain_over_best, _bootstrap_seed(seed, "C2", "best"), "seeds")
        over_fedavg = bootstrap_interval([triples[:, :2]], mean_gain, _bootstrap_seed(seed, "C2", "fedavg"), "seeds")
        return all_hold({"near the best": on_interval(near_best, Gate(low=-C2_SLACK)),
                         "over FedAvg": on_interval(over_fedavg, Gate(low=C2_MARGIN))})

    fedavg_ft = value(table, "fedavg_ft", alpha, "personal_mean")
    ours = value(table, "fedcdwa", alpha, "personal_mean")
    return Claim("C2", f"personalised accuracy: FedCDWA >= max(FedAvg, FedProto) - {C2_SLACK:g} point and "
                       f">= FedAvg + {C2_MARGIN:g} points",
                 "better personalised accuracy (no numbers published)", margin_best, -C2_SLACK,
                 _decide(verdict, deciding, alphas, (HARD,)),
                 {"setting": f"alpha = {alpha:g}", "unit": "points",
                  "per_seed": None if not found else {label: triples[:, i].tolist()
                                                      for i, label in enumerate(("fedcdwa", "fedavg", "fedproto"))},
                  "fedcdwa": ours, "fedavg": value(table, "fedavg", alpha, "personal_mean"),
                  "fedproto": value(table, "fedproto", alpha, "personal_mean"), "fedavg_ft": fedavg_ft,
                  "margin_over_fedavg": margin_fedavg, "margin_over_fedavg_threshold": C2_MARGIN,
                  "fedcdwa_minus_fedavg_ft": None if None in (fedavg_ft, ours) else POINTS * (ours - fedavg_ft)})


def claim_c3(table: dict, alphas: list[float], deciding: bool, seed: int) -> Claim:
    def drop(label):
        mild, hard = value(table, label, MILD, "global_mean"), value(table, label, HARD, "global_mean")
        return None if None in (mild, hard) else POINTS * (mild - hard)

    mild, hard = (per_seed(table, ("fedcdwa", "fedavg"), alpha, "global") for alpha in (MILD, HARD))
    found = mild is not None and hard is not None
    difference = drop_difference(mild, hard) if found else None

    def verdict() -> Verdict:
        if not found:
            return not_run(f"FedCDWA or FedAvg has no runs at alpha = {MILD:g} or {HARD:g}")
        # The splits of one seed index differ between alphas: each alpha's seeds are resampled on their own.
        interval = bootstrap_interval([mild, hard], drop_difference, _bootstrap_seed(seed, "C3"), "seeds")
        return on_interval(interval, Gate(high=C3_GATE))

    return Claim("C3", f"smaller degradation: global acc(alpha {MILD:g}) - global acc(alpha {HARD:g}) of FedCDWA <= "
                       "that of FedAvg (the difference of the drops <= 0)",
                 "smaller degradation under more severe heterogeneity", difference, C3_GATE,
                 _decide(verdict, deciding, alphas, (MILD, HARD)),
                 {"setting": f"alpha {MILD:g} vs {HARD:g}", "unit": "points",
                  "per_seed": None if not found else {f"alpha {alpha:g}": {"fedcdwa": rows[:, 0].tolist(),
                                                                           "fedavg": rows[:, 1].tolist()}
                                                      for alpha, rows in ((MILD, mild), (HARD, hard))},
                  "fedcdwa_drop": drop("fedcdwa"), "fedavg_drop": drop("fedavg"),
                  "drops": {label: drop(label) for label in sorted({row["label"] for row in table.values()})}})


def claims(table: dict, alphas: list[float], deciding: bool, seed: int) -> list[Claim]:
    """C1 and C2 at alpha = 0.1, C3 between alpha 1.0 and 0.1; `seed` fixes the bootstrap's draws."""
    return [claim(table, alphas, deciding, seed) for claim in (claim_c1, claim_c2, claim_c3)]
