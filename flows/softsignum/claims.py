"""The SoftSignum paper's claim checks (spec softsignum §6, THE CLAIM CHECK) from the run records of
tasks.optim.softsignum_runs, plus the sanity check that the soft methods follow their hard counterparts
exactly until T_sign (a divergence there is a bug, not a result)."""
from __future__ import annotations

import numpy as np

from tasks.core.claims import Claim, decided, median_of

from .runs import SOFT_OF

TERMINAL_FRACTION = 0.05  # claim 1 averages the last 5% of steps


def terminal_loss(record: dict) -> float:
    """Mean noise-free objective f over the last 5% of steps (quad-het evaluates f after every step)."""
    values = [row["f"] for row in record["evals"]]
    return float(np.mean(values[-max(1, round(TERMINAL_FRACTION * len(values))):]))


def _by(records: list[dict], task: str) -> dict[str, dict[int, dict]]:
    """optimizer -> seed -> record of one task."""
    table: dict[str, dict[int, dict]] = {}
    for r in records:
        if r["task"] == task:
            table.setdefault(r["optimizer"], {})[r["seed"]] = r
    return table


def _median(table: dict, name: str, value) -> float | None:
    """Median over seeds of value(record) for optimizer `name` (None when it did not run)."""
    return median_of(value(r) for r in table[name].values()) if name in table else None


def pre_transition_gaps(records: list[dict]) -> dict[str, float]:
    """'task/method' -> max |loss(method) - loss(hard counterpart)| over steps <= T_sign, all seeds (0 when exact)."""
    gaps = {}
    for task in sorted({r["task"] for r in records}):
        table = _by(records, task)
        for method, hard in SOFT_OF.items():
            if method not in table or hard not in table:
                continue
            worst = 0.0
            for seed, record in table[method].items():
                t_sign = record["t_sign"]
                ours = {row["step"]: row["loss"] for row in record["curve"] if row["step"] <= t_sign}
                theirs = {row["step"]: row["loss"] for row in table[hard][seed]["curve"] if row["step"] <= t_sign}
                worst = max([worst, *(abs(ours[s] - theirs[s]) for s in ours.keys() & theirs.keys())])
            gaps[f"{task}/{method}"] = worst
    return gaps


def evaluate_claims(records: list[dict], *, decide: bool) -> tuple[list[Claim], dict[str, float]]:
    """C1 quad-het terminal loss, C2 char-LM accuracy (vector optimizers), C3 char-LM loss (matrix optimizers);
    returns the claims and the metrics behind them."""
    gaps = pre_transition_gaps(records)
    coincide = all(gap == 0.0 for gap in gaps.values())
    quad, lm, mat = _by(records, "quad_het"), _by(records, "charlm"), _by(records, "mat_het")

    soft_q, sign_q, hard_q = (_median(quad, n, terminal_loss) for n in ("softsignum", "signum", "hardswitch"))
    ratio_q = soft_q / sign_q if soft_q is not None and sign_q else None
    c1 = Claim("C1", "quad-het: median terminal loss SoftSignum <= 0.5 x Signum and <= HardSwitchSign",
               "gains appear after the transition (numpy pre-check ratio ~0.14)", ratio_q, 0.5,
               decided(ratio_q is not None and ratio_q <= 0.5 and hard_q is not None and soft_q <= hard_q, decide,
                        ratio_q, hard_q),
               {"softsignum": soft_q, "signum": sign_q, "hardswitch": hard_q, "seeds": len(quad.get("softsignum", {})),
                "softsignum_over_hardswitch": soft_q / hard_q if soft_q is not None and hard_q else None,
                "pre_transition_max_gap": gaps.get("quad_het/softsignum")})

    def acc(r):
        return r["final"]["accuracy"]

    soft_a, sign_a, hard_a, adamw_a = (_median(lm, n, acc) for n in ("softsignum", "signum", "hardswitch", "adamw"))
    gap_a = soft_a - sign_a if soft_a is not None and sign_a is not None else None
    hard_ok = hard_a is None or soft_a >= hard_a  # smoke runs no HardSwitchSign: then only Signum decides
    c2 = Claim("C2", "char-LM: median final val accuracy SoftSignum >= Signum and >= HardSwitchSign",
               "NCP Transformer: SoftSignum 57.05, Signum 56.17, HardSwitchSign 56.17, AdamW 56.91", gap_a, 0.0,
               decided(gap_a is not None and gap_a >= 0 and hard_ok, decide, gap_a, hard_a),
               {"softsignum": soft_a, "signum": sign_a, "hardswitch": hard_a, "adamw": adamw_a,
                "softsignum_minus_adamw": soft_a - adamw_a if soft_a is not None and adamw_a is not None else None,
                "seeds": len(lm.get("softsignum", {})), "pre_transition_max_gap": gaps.get("charlm/softsignum")})

    def val_loss(r):
        return r["final"]["loss"]

    soft_l, muon_l = _median(lm, "softmuon", val_loss), _median(lm, "muon", val_loss)
    ratio_l = soft_l / muon_l if soft_l is not None and muon_l else None
    mat_soft, mat_muon = _median(mat, "softmuon", val_loss), _median(mat, "muon", val_loss)
    c3 = Claim("C3", "char-LM: median final val loss SoftMuon <= Muon (same hyperparameters)",
               "720M LLM: 16.216 vs 16.362 PPL (-0.9%)", ratio_l, 1.0,
               decided(ratio_l is not None and ratio_l <= 1.0, decide, ratio_l),
               {"softmuon": soft_l, "muon": muon_l, "seeds": len(lm.get("softmuon", {})),
                "mat_het_softmuon_over_muon": mat_soft / mat_muon if mat_soft is not None and mat_muon else None,
                "mat_het_softmuon": mat_soft, "mat_het_muon": mat_muon,
                "pre_transition_max_gap": gaps.get("charlm/softmuon"),
                "mat_het_pre_transition_max_gap": gaps.get("mat_het/softmuon")})

    metrics = {"pre_transition.coincide": float(coincide), **{f"pre_transition.gap.{k}": v for k, v in gaps.items()}}
    for task, table, value in (("quad_het", quad, terminal_loss), ("mat_het", mat, val_loss), ("charlm", lm, val_loss)):
        for name in table:
            metrics[f"{task}.{name}.final_loss"] = _median(table, name, value)
            metrics[f"{task}.{name}.wall_time_s"] = _median(table, name, lambda r: r["wall_time_s"])
    for name in lm:
        metrics[f"charlm.{name}.accuracy"] = _median(lm, name, acc)
    for claim in (c1, c2, c3):
        if claim.ours is not None:
            metrics[f"claim.{claim.id}"] = claim.ours
    return [c1, c2, c3], metrics
