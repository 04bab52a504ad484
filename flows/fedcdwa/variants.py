"""FedCDWA's ablations (spec §6 item 4): each one switch of FedConfig, run on the same splits and seeds."""
from __future__ import annotations

ABLATIONS = {
    "no_pvda": {"lam_gm": 0.0, "lam_gv": 0.0},  # global-branch PVDA off (the source of the global gain, §6)
    "pvda_mean_only": {"lam_gv": 0.0, "lam_pv": 0.0},  # prototype term only, no variance term, both branches
    "hwa_gauss": {"support": 1},  # parametric HWA: S_c = {mu_c}, with sigma_c the diagonal-Gaussian barycenter
    "no_server_distillation": {"server_steps": 0},
    "ungated_server_step": {"gate_server_step": False},  # the spec's step, kept every round (the teachers weighted)
}


def run_name(method: str, alpha: float, seed_index: int, ablation: str | None = None) -> str:
    return f"{method}{'-' + ablation if ablation else ''}_a{alpha:g}_s{seed_index}"
