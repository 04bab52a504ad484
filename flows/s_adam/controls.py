"""The learning-rate control of claims C1 and C2: AdamW at lr x S-Adam's measured mean damping.

S-Adam multiplies AdamW's step by exp(-lambda rho), which is far from 1 on these tasks (spec s_adam §11), so a
gain over AdamW may be the effect of a plain smaller learning rate. The control, fixed before any result, per
digits setting:
- damping = the median over seeds of S-Adam's mean damping of a run, where a run's mean damping is the mean over
  epochs of the per-epoch mean per-step damp (every epoch has the same number of steps, so it is the mean per-step
  damp over the run): `run_summary`'s `mean_damp`, the number the claims report as `sadam_mean_damp`;
- lr = AdamW's lr x damping, every other AdamW option unchanged (so its decoupled weight decay, lr x wd per step,
  shrinks with it, where S-Adam's does not);
- the same split, labels, seeds, epochs, batch and quantisation as the S-Adam runs.
It is reported beside the claim and never changes its verdict.
"""
from __future__ import annotations

from tasks.core.claims import median_of

from .claims import pp
from .params import CONTROL

WHAT = "AdamW at lr x S-Adam's measured mean damping (same data, seeds and epochs)"


def measured_damping(summaries: list[dict], task: str) -> dict:
    """{"by_seed": seed -> S-Adam's mean damping of that run, "damping": their median} for `task`."""
    by_seed = {s["seed"]: s["mean_damp"] for s in summaries if s["task"] == task and s["optimizer"] == "sadam"}
    if not by_seed or None in by_seed.values():
        raise ValueError(f"{task}: no S-Adam runs with a damping trace to measure")
    return {"by_seed": by_seed, "damping": median_of(by_seed.values())}


def damped_options(adamw_options: dict, damping: float) -> dict:
    """AdamW's options with lr scaled by `damping` (0 < damping <= 1)."""
    if not 0 < damping <= 1:
        raise ValueError(f"damping: must be in (0, 1], got {damping!r}")
    return adamw_options | {"lr": adamw_options["lr"] * damping}


def control_details(table: dict[tuple[str, str], dict], task: str, record: dict) -> dict:
    """{CONTROL: the control's median numbers beside S-Adam's and AdamW's} for `task`. `table`: the medians over seeds
    (claims.medians) with the control's runs included; `record`: what the control stage measured (damping, lr)."""
    control, sadam, adamw = (table[task, name] for name in (CONTROL, "sadam", "adamw"))
    return {CONTROL: {"what": WHAT, "damping": record["damping"], "lr": record["lr"], "adamw_lr": record["adamw_lr"],
                      "median_accuracy": control["final_accuracy"], "median_volatility": control["volatility"],
                      "sadam_minus_control_pp": pp(sadam["final_accuracy"] - control["final_accuracy"]),
                      "control_minus_adamw_pp": pp(control["final_accuracy"] - adamw["final_accuracy"])}}
