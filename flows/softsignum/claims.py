"""The SoftSignum paper's claim checks (spec softsignum §6, THE CLAIM CHECK) from the run records of
flows.softsignum.experiments, plus the sanity check that the soft methods follow their hard counterparts
exactly until T_sign (a divergence there is a bug, not a result).

Beside C1 and C2 stand the controls of SoftSignum's clamp (flows.softsignum.variants), each scored by the claim's
own metric and test as if it were SoftSignum: HardSwitch x tau_max (if it does as well, the gain is the clamp's
u ~ tau_max d, not the schedule's) and SoftSignum unclamped (tau_max = 1e9: what the fitted schedule does on its
own). With them, each claim shows how much its soft methods' schedules sit at tau_max and how saturated their
updates are after T_sign. Controls never change `passed`. SoftMuon (C3) runs with tau_max = 1e9, an inactive clamp,
so it has no clamp controls; its clamp use is shown the same way."""
from __future__ import annotations

import numpy as np

from tasks.core.claims import Claim, decided, median_of

from .experiments import SOFT_OF
from .variants import base_of, parse_variant

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


def _median_known(table: dict, name: str, key: str) -> float | None:
    """Median over seeds of record[key] where it is known (None when it never is)."""
    return median_of(r[key] for r in table.get(name, {}).values() if r.get(key) is not None)


def _controls(table: dict) -> list[str]:
    return sorted(name for name in table if parse_variant(name).is_control)


def clamp_use(table: dict) -> dict[str, dict]:
    """Per method with a transition (and per control): its tau_max and the medians over seeds of the share of
    schedule entries at tau_max and of the saturated fraction after T_sign."""
    names = [name for name in (*SOFT_OF, *_controls(table)) if name in table]
    return {name: {"tau_max": next(iter(table[name].values())).get("tau_max"),
                   "schedule_at_tau_max": _median_known(table, name, "schedule_at_tau_max"),
                   "saturated_after_t_sign": _median_known(table, name, "saturated_after_t_sign")} for name in names}


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def _minus(a: float | None, b: float | None) -> float | None:
    return a - b if a is not None and b is not None else None


def pre_transition_gaps(records: list[dict]) -> dict[str, float]:
    """'task/method' -> max |loss(method) - loss(hard counterpart)| over steps <= T_sign, all seeds (0 when exact)."""
    gaps = {}
    for task in sorted({r["task"] for r in records}):
        table = _by(records, task)
        for method in (*SOFT_OF, *(n for n in _controls(table) if base_of(n) in SOFT_OF)):
            hard = SOFT_OF[base_of(method)]
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


def _c1_control(loss: float | None, soft: float | None, signum: float | None, hardswitch: float | None,
                decide: bool) -> dict:
    """A control scored like SoftSignum in C1: its terminal loss, its ratio to Signum (C1's number), SoftSignum's
    loss over it, and whether it would meet C1 (ratio <= 0.5 and loss <= HardSwitchSign's)."""
    ratio = _ratio(loss, signum)
    return {"terminal_loss": loss, "ratio_to_signum": ratio, "softsignum_over_control": _ratio(soft, loss),
            "over_hardswitch": _ratio(loss, hardswitch),
            "meets_claim": decided(ratio is not None and ratio <= 0.5 and hardswitch is not None and loss <= hardswitch,
                                   decide, ratio, hardswitch).passed}


def _c2_control(accuracy: float | None, soft: float | None, signum: float | None, hardswitch: float | None,
                decide: bool) -> dict:
    """A control scored like SoftSignum in C2: its accuracy, minus Signum's (C2's number), SoftSignum's minus it,
    and whether it would meet C2 (>= Signum and >= HardSwitchSign where that runs)."""
    gap = _minus(accuracy, signum)
    return {"accuracy": accuracy, "minus_signum": gap, "softsignum_minus_control": _minus(soft, accuracy),
            "meets_claim": decided(gap is not None and gap >= 0 and (hardswitch is None or accuracy >= hardswitch),
                                   decide, gap).passed}


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
                "pre_transition_max_gap": gaps.get("quad_het/softsignum"),
                "controls": {name: _c1_control(_median(quad, name, terminal_loss), soft_q, sign_q, hard_q, decide)
                             for name in _controls(quad)},
                "clamp": clamp_use(quad)})

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
                "seeds": len(lm.get("softsignum", {})), "pre_transition_max_gap": gaps.get("charlm/softsignum"),
                "controls": {name: _c2_control(_median(lm, name, acc), soft_a, sign_a, hard_a, decide)
                             for name in _controls(lm) if base_of(name) in SOFT_OF},
                "clamp": {k: v for k, v in clamp_use(lm).items() if base_of(k) != "softmuon"}})

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
                "mat_het_pre_transition_max_gap": gaps.get("mat_het/softmuon"),
                "clamp": {"charlm": clamp_use(lm).get("softmuon"), "mat_het": clamp_use(mat).get("softmuon"),
                          "controls": "none: SoftMuon's tau_max is 1e9 (its official default), an inactive clamp"}})

    metrics = {"pre_transition.coincide": float(coincide), **{f"pre_transition.gap.{k}": v for k, v in gaps.items()}}
    for task, table, value in (("quad_het", quad, terminal_loss), ("mat_het", mat, val_loss), ("charlm", lm, val_loss)):
        for name in table:
            metrics[f"{task}.{name}.final_loss"] = _median(table, name, value)
            metrics[f"{task}.{name}.wall_time_s"] = _median(table, name, lambda r: r["wall_time_s"])
    for name in lm:
        metrics[f"charlm.{name}.accuracy"] = _median(lm, name, acc)
    for task, table in (("quad_het", quad), ("mat_het", mat), ("charlm", lm)):
        for name, use in clamp_use(table).items():
            metrics |= {f"{task}.{name}.{k}": v for k, v in use.items() if k != "tau_max" and v is not None}
    for claim, key in ((c1, "ratio_to_signum"), (c2, "minus_signum")):
        for name, control in claim.details["controls"].items():
            if control[key] is not None:
                metrics[f"control.{claim.id}.{name}.{key}"] = control[key]
    for claim in (c1, c2, c3):
        if claim.ours is not None:
            metrics[f"claim.{claim.id}"] = claim.ours
    return [c1, c2, c3], metrics
