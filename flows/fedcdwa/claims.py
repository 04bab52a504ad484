"""fedcdwa claim checks C1-C3 (spec §6), on the means over seeds of summaries.summarize; thresholds fixed by the
spec before any run. Accuracies are compared in points (1 point = 0.01)."""
from __future__ import annotations

from tasks.core.claims import Claim, decided

from .summaries import value

HARD, MILD = 0.1, 1.0  # the alphas the claims name: most and least heterogeneous
C1_MARGIN = 1.0  # points: FedCDWA global >= FedAvg global + 1
C2_SLACK, C2_MARGIN = 0.5, 2.0  # personal >= max(FedAvg, FedProto) - 0.5 and >= FedAvg + 2
POINTS = 100.0


def _points(x: float | None) -> float | None:
    return None if x is None else POINTS * x


def _by_method(table: dict, alpha: float) -> dict:
    """Every method's (and ablation's) mean and 95 % interval at `alpha`, with communication bytes."""
    return {row["label"]: {k: row[k] for k in ("global_mean", "global_ci95", "personal_mean", "personal_ci95",
                                               "bytes_up_per_round", "bytes_down_per_round", "seeds")}
            for row in table.values() if row["alpha"] == alpha}


def claim_c1(table: dict, alpha: float, decide: bool) -> Claim:
    ours, base = value(table, "fedcdwa", alpha, "global_mean"), value(table, "fedavg", alpha, "global_mean")
    gain = None if None in (ours, base) else _points(ours - base)
    return Claim("C1", f"global accuracy: FedCDWA >= FedAvg + {C1_MARGIN:g} point (mean over seeds)",
                 "better global accuracy (no numbers published)", gain, C1_MARGIN,
                 decided(gain is not None and gain >= C1_MARGIN, decide, gain),
                 {"setting": f"alpha = {alpha:g}", "unit": "points", "fedcdwa": ours, "fedavg": base,
                  "by_method": _by_method(table, alpha)})


def claim_c2(table: dict, alpha: float, decide: bool) -> Claim:
    ours = value(table, "fedcdwa", alpha, "personal_mean")
    fedavg, fedproto = (value(table, m, alpha, "personal_mean") for m in ("fedavg", "fedproto"))
    best = max((v for v in (fedavg, fedproto) if v is not None), default=None)
    margin_best = None if None in (ours, best) else _points(ours - best)
    margin_fedavg = None if None in (ours, fedavg) else _points(ours - fedavg)
    ok = (margin_best is not None and margin_best >= -C2_SLACK and fedproto is not None
          and margin_fedavg is not None and margin_fedavg >= C2_MARGIN)
    return Claim("C2", f"personalised accuracy: FedCDWA >= max(FedAvg, FedProto) - {C2_SLACK:g} point and "
                       f">= FedAvg + {C2_MARGIN:g} points",
                 "better personalised accuracy (no numbers published)", margin_best, -C2_SLACK,
                 decided(ok, decide and fedproto is not None, margin_best, margin_fedavg),
                 {"setting": f"alpha = {alpha:g}", "unit": "points", "fedcdwa": ours, "fedavg": fedavg,
                  "fedproto": fedproto, "fedavg_ft": value(table, "fedavg_ft", alpha, "personal_mean"),
                  "margin_over_fedavg": margin_fedavg, "margin_over_fedavg_threshold": C2_MARGIN,
                  "fedcdwa_minus_fedavg_ft": None if value(table, "fedavg_ft", alpha, "personal_mean") is None or ours is None
                  else _points(ours - value(table, "fedavg_ft", alpha, "personal_mean"))})


def claim_c3(table: dict, decide: bool) -> Claim:
    def drop(label):
        mild, hard = value(table, label, MILD, "global_mean"), value(table, label, HARD, "global_mean")
        return None if None in (mild, hard) else _points(mild - hard)

    ours, base = drop("fedcdwa"), drop("fedavg")
    return Claim("C3", f"smaller degradation: global acc(alpha {MILD:g}) - global acc(alpha {HARD:g}) of FedCDWA <= "
                       "that of FedAvg",
                 "smaller degradation under more severe heterogeneity", ours, base,
                 decided(None not in (ours, base) and ours <= base, decide, ours, base),
                 {"setting": f"alpha {MILD:g} vs {HARD:g}", "unit": "points", "fedcdwa_drop": ours, "fedavg_drop": base,
                  "drops": {label: drop(label) for label in sorted({row["label"] for row in table.values()})}})


def claims(table: dict, alphas: list[float], decide: bool) -> list[Claim]:
    """C1 and C2 at alpha = 0.1 (the smallest alpha of a profile without it, undecided there)."""
    hard = HARD if HARD in alphas else min(alphas)
    decide = decide and hard == HARD
    return [claim_c1(table, hard, decide), claim_c2(table, hard, decide), claim_c3(table, decide)]
