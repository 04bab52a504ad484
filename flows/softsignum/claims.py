"""The SoftSignum paper's claim checks (spec softsignum §6, THE CLAIM CHECK) from the run records of
flows.softsignum.experiments, plus the sanity check that the soft methods follow their hard counterparts
exactly until T_sign (a divergence there is a bug, not a result).

Every optimizer of a task runs on the same seeds (same instance, same batches), so each claim compares medians over
seeds and is decided on a paired bootstrap over those seeds (tasks.core.claims). A claim with two conditions is
decided on the worse of them, put on one scale: C1 on the larger of SoftSignum / (0.5 Signum) and SoftSignum /
HardSwitchSign (<= 1), C2 on the smaller of the accuracy gaps to Signum and to HardSwitchSign (>= 0).

Beside C1 and C2 stand the controls of SoftSignum's clamp (flows.softsignum.variants), each scored by the claim's
own statistic and interval as if it were SoftSignum: HardSwitch x tau_max (if it does as well, the gain is the
clamp's u ~ tau_max d, not the schedule's) and SoftSignum unclamped (tau_max = 1e9: what the fitted schedule does on
its own). With them, each claim shows how much its soft methods' schedules sit at tau_max and how saturated their
updates are after T_sign. Controls never change the claim's verdict. SoftMuon (C3) runs with tau_max = 1e9, an
inactive clamp, so it has no clamp controls; its clamp use is shown the same way."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tasks.core.claims import Claim, Gate, Verdict, bootstrap_interval, decide, median_of, not_run, on_interval
from tasks.core.seeding import derive_seed

from .experiments import SOFT_OF
from .variants import base_of, parse_variant

TERMINAL_FRACTION = 0.05  # claim 1 averages the last 5% of steps
C1_RATIO = 0.5  # SoftSignum's terminal loss at most half Signum's (spec §6)


def terminal_loss(record: dict) -> float:
    """Mean noise-free objective f over the last 5% of steps (quad-het evaluates f after every step)."""
    values = [row["f"] for row in record["evals"]]
    return float(np.mean(values[-max(1, round(TERMINAL_FRACTION * len(values))):]))


def accuracy(record: dict) -> float:
    return record["final"]["accuracy"]


def val_loss(record: dict) -> float:
    return record["final"]["loss"]


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


def paired_rows(table: dict, names: list[str], value: Callable[[dict], float]) -> dict[int, list[float]]:
    """seed -> [value(record) of each optimizer in `names`], for the seeds on which all of them ran."""
    seeds = set.intersection(*(set(table.get(name, {})) for name in names))
    return {seed: [value(table[name][seed]) for name in names] for seed in sorted(seeds)}


def per_seed(table: dict, value: Callable[[dict], float]) -> dict[int, dict[str, float]]:
    """seed -> optimizer -> value(record): the units every interval of a task is computed from."""
    return {seed: {name: value(runs[seed]) for name, runs in sorted(table.items()) if seed in runs}
            for seed in sorted({seed for runs in table.values() for seed in runs})}


def point(rows: dict[int, list[float]], statistic: Callable[[np.ndarray], float]) -> float | None:
    """The statistic on every seed's row (None when no seed has every run)."""
    return statistic(np.array(list(rows.values()))) if rows else None


def on_seeds(rows: dict[int, list[float]], statistic: Callable[[np.ndarray], float], gate: Gate, key: str) -> Verdict:
    """The verdict on a paired bootstrap of `statistic` over the seeds' rows (a fixed bootstrap seed per `key`)."""
    if len(rows) < 2:
        return not_run(f"{len(rows)} seed(s) with every run: a paired bootstrap needs at least 2")
    return on_interval(bootstrap_interval([list(rows.values())], statistic, derive_seed(0, "bootstrap", key), "seeds"), gate)


def c1_worst(rows: np.ndarray) -> float:
    """Larger of median method / (0.5 median Signum) and median method / median HardSwitchSign; rows: seeds x
    (method, Signum, HardSwitchSign)."""
    method, signum, hardswitch = np.median(rows, axis=0)
    return float(max(method / (C1_RATIO * signum), method / hardswitch))


def c2_worst(rows: np.ndarray) -> float:
    """Smaller of median method minus median Signum and (where it ran) minus median HardSwitchSign; rows: seeds x
    (method, Signum[, HardSwitchSign])."""
    method, *baselines = np.median(rows, axis=0)
    return float(min(method - b for b in baselines))


def c3_ratio(rows: np.ndarray) -> float:
    """Median SoftMuon / median Muon; rows: seeds x (SoftMuon, Muon)."""
    soft, muon = np.median(rows, axis=0)
    return float(soft / muon)


def scored(table: dict, method: str, baselines: list[str], value, statistic, gate: Gate, key: str,
           deciding: bool) -> tuple[float | None, Verdict, int]:
    """`method` against its baselines by the claim's statistic: the point value, the verdict, the seeds used."""
    rows = paired_rows(table, [method, *baselines], value)
    return point(rows, statistic), decide(lambda: on_seeds(rows, statistic, gate, key), deciding), len(rows)


def control_score(verdict: Verdict, **numbers) -> dict:
    """A control's numbers and the verdict the claim's test would give it (it never decides the claim)."""
    return numbers | {"verdict": verdict.word, "meets_claim": verdict.passed,
                      "interval": None if verdict.interval is None else [verdict.interval.low, verdict.interval.high]}


def c1_claim(quad: dict, gaps: dict, deciding: bool) -> Claim:
    baselines, gate = ["signum", "hardswitch"], Gate(high=1.0)
    ours, verdict, n = scored(quad, "softsignum", baselines, terminal_loss, c1_worst, gate, "C1", deciding)
    soft, sign, hard = (_median(quad, name, terminal_loss) for name in ("softsignum", *baselines))
    controls = {}
    for name in _controls(quad):
        worst, control_verdict, _ = scored(quad, name, baselines, terminal_loss, c1_worst, gate, f"C1.{name}", deciding)
        loss = _median(quad, name, terminal_loss)
        controls[name] = control_score(control_verdict, terminal_loss=loss, worst_to_allowance=worst,
                                       ratio_to_signum=_ratio(loss, sign), softsignum_over_control=_ratio(soft, loss),
                                       over_hardswitch=_ratio(loss, hard))
    return Claim("C1", "quad-het: median terminal loss SoftSignum <= 0.5 x Signum and <= HardSwitchSign "
                       "(worse of SoftSignum/(0.5 Signum) and SoftSignum/HardSwitchSign <= 1)",
                 "gains appear after the transition (numpy pre-check ratio ~0.14)", ours, 1.0, verdict,
                 {"softsignum": soft, "signum": sign, "hardswitch": hard, "seeds": n,
                  "ratio_to_signum": _ratio(soft, sign), "softsignum_over_hardswitch": _ratio(soft, hard),
                  "per_seed_terminal_loss": per_seed(quad, terminal_loss),
                  "pre_transition_max_gap": gaps.get("quad_het/softsignum"), "controls": controls,
                  "clamp": clamp_use(quad)})


def c2_claim(lm: dict, gaps: dict, deciding: bool) -> Claim:
    # smoke runs no HardSwitchSign: then only Signum decides
    baselines, gate = [name for name in ("signum", "hardswitch") if name in lm], Gate(low=0.0)
    ours, verdict, n = scored(lm, "softsignum", baselines, accuracy, c2_worst, gate, "C2", deciding)
    soft, sign, hard, adamw = (_median(lm, name, accuracy) for name in ("softsignum", "signum", "hardswitch", "adamw"))
    controls = {}
    for name in (control for control in _controls(lm) if base_of(control) in SOFT_OF):
        worst, control_verdict, _ = scored(lm, name, baselines, accuracy, c2_worst, gate, f"C2.{name}", deciding)
        value = _median(lm, name, accuracy)
        controls[name] = control_score(control_verdict, accuracy=value, worst_gap=worst, minus_signum=_minus(value, sign),
                                       softsignum_minus_control=_minus(soft, value))
    return Claim("C2", "char-LM: median final val accuracy SoftSignum >= Signum and >= HardSwitchSign "
                       "(smaller of the two gaps >= 0)",
                 "NCP Transformer: SoftSignum 57.05, Signum 56.17, HardSwitchSign 56.17, AdamW 56.91", ours, 0.0, verdict,
                 {"softsignum": soft, "signum": sign, "hardswitch": hard, "adamw": adamw,
                  "minus_signum": _minus(soft, sign), "minus_hardswitch": _minus(soft, hard),
                  "softsignum_minus_adamw": _minus(soft, adamw), "seeds": n,
                  "per_seed_accuracy": per_seed(lm, accuracy),
                  "pre_transition_max_gap": gaps.get("charlm/softsignum"), "controls": controls,
                  "clamp": {k: v for k, v in clamp_use(lm).items() if base_of(k) != "softmuon"}})


def c3_claim(lm: dict, mat: dict, gaps: dict, deciding: bool) -> Claim:
    ours, verdict, n = scored(lm, "softmuon", ["muon"], val_loss, c3_ratio, Gate(high=1.0), "C3", deciding)
    mat_soft, mat_muon = _median(mat, "softmuon", val_loss), _median(mat, "muon", val_loss)
    return Claim("C3", "char-LM: median final val loss SoftMuon <= Muon (same hyperparameters)",
                 "720M LLM: 16.216 vs 16.362 PPL (-0.9%)", ours, 1.0, verdict,
                 {"softmuon": _median(lm, "softmuon", val_loss), "muon": _median(lm, "muon", val_loss), "seeds": n,
                  "per_seed_val_loss": per_seed({k: v for k, v in lm.items() if k in ("softmuon", "muon")}, val_loss),
                  "mat_het_softmuon_over_muon": _ratio(mat_soft, mat_muon),
                  "mat_het_softmuon": mat_soft, "mat_het_muon": mat_muon,
                  "pre_transition_max_gap": gaps.get("charlm/softmuon"),
                  "mat_het_pre_transition_max_gap": gaps.get("mat_het/softmuon"),
                  "clamp": {"charlm": clamp_use(lm).get("softmuon"), "mat_het": clamp_use(mat).get("softmuon"),
                            "controls": "none: SoftMuon's tau_max is 1e9 (its official default), an inactive clamp"}})


def evaluate_claims(records: list[dict], *, deciding: bool) -> tuple[list[Claim], dict[str, float]]:
    """C1 quad-het terminal loss, C2 char-LM accuracy (vector optimizers), C3 char-LM loss (matrix optimizers);
    returns the claims and the metrics behind them."""
    gaps = pre_transition_gaps(records)
    quad, lm, mat = _by(records, "quad_het"), _by(records, "charlm"), _by(records, "mat_het")
    c1, c2, c3 = c1_claim(quad, gaps, deciding), c2_claim(lm, gaps, deciding), c3_claim(lm, mat, gaps, deciding)

    metrics = {"pre_transition.coincide": float(all(gap == 0.0 for gap in gaps.values())),
               **{f"pre_transition.gap.{k}": v for k, v in gaps.items()}}
    for task, table, value in (("quad_het", quad, terminal_loss), ("mat_het", mat, val_loss), ("charlm", lm, val_loss)):
        for name in table:
            metrics[f"{task}.{name}.final_loss"] = _median(table, name, value)
            metrics[f"{task}.{name}.wall_time_s"] = _median(table, name, lambda r: r["wall_time_s"])
    for name in lm:
        metrics[f"charlm.{name}.accuracy"] = _median(lm, name, accuracy)
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
