"""The experiment recipes of balora's stages: testbeds A and B (spec §6.1-6.2) on one synthetic problem, the runs
of each method from each init; testbed C's pieces: the corpora as ids, the tiny base model, and one fine-tuning run.

A: per init, method and optimizer, every lr of the grid; the lr of smallest final loss is the run's (divergent
lrs never win); the excess-loss curve (loss - optimal loss) of that lr is kept. B: per init, LoRA and BaLoRA with
sign descent and a decaying step, then the exact Hessian at the end point: condition number and balancing gap.
"""
from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import torch

from tasks.lm.corpus import CHAR_VOCAB
from tasks.lm.model import TinyLMConfig, build_model, load_model, save_model
from tasks.lm.pretrain import fixed_windows, pretrain
from tasks.lm.training import TrainSetting
from tasks.lowrank.balance import balancing_gap
from tasks.lowrank.synthetic import (Descent, balanced_condition_number, condition_number, factor_descent, hessian,
                                     optimal_loss)

from .finetune import FinetuneSetting, finetune
from .params import Params

# ---------------------------------------------------------------- testbeds A and B

SYNTHETIC_METHODS = {"lora": None, "balora": "svd", "balora_aligned": "aligned"}


def lr_grid(grid) -> torch.Tensor:
    space = np.linspace if grid.spacing == "lin" else np.geomspace
    return torch.tensor(space(grid.start, grid.stop, grid.num), dtype=torch.float64)


def convergence_runs(problem: dict, steps: int, lr_grids: dict[str, torch.Tensor]) -> list[dict]:
    T, W0 = torch.from_numpy(problem["T"]), torch.from_numpy(problem["W0"])
    r = problem["B0"].shape[1]
    best = optimal_loss(T, W0, r)
    rows = []
    for k, B0 in enumerate(torch.from_numpy(problem["B0"])):
        A0 = torch.zeros(T.shape[0], r, dtype=torch.float64)
        for optimizer, lrs in lr_grids.items():
            for method, balancing in SYNTHETIC_METHODS.items():
                losses, _, _ = factor_descent(T, W0, A0, B0, lrs, Descent(steps, optimizer, balancing))
                pick = int(torch.argmin(losses[:, -1]))
                rows.append({"init": k, "optimizer": optimizer, "method": method, "lr": float(lrs[pick]),
                             "excess": (losses[pick] - best).clamp_min(0).tolist(),
                             "diverged_lrs": int((~torch.isfinite(losses[:, -1])).sum())})
    return rows


def conditioning_runs(problem: dict, steps: int, lr: float, decay: float, inits: int) -> dict:
    T, W0 = torch.from_numpy(problem["T"]), torch.from_numpy(problem["W0"])
    r = problem["B0"].shape[1]
    best = optimal_loss(T, W0, r)
    rows = []
    for k, B0 in enumerate(torch.from_numpy(problem["B0"][:inits])):
        A0 = torch.zeros(T.shape[0], r, dtype=torch.float64)
        for method in ("lora", "balora"):
            losses, A, B = factor_descent(T, W0, A0, B0, torch.tensor([lr]),
                                          Descent(steps, "sign", SYNTHETIC_METHODS[method], decay))
            eigenvalues = torch.linalg.eigvalsh(hessian(T, W0, A[0], B[0]))
            rows.append({"init": k, "method": method, "kappa": condition_number(eigenvalues, r),
                         "excess": float(losses[0, -1] - best), "gap": float(balancing_gap(A[0], B[0])),
                         "A_norm_sq": float(A[0].square().sum()),
                         "zero_eigenvalues": int((eigenvalues.abs() < 1e-6 * eigenvalues.abs().max()).sum()),
                         "spectrum": eigenvalues.tolist()})
    return {"kappa_closed_form": balanced_condition_number(T, W0, r), "rows": rows,
            "sigma": torch.linalg.svdvals(T - W0).tolist()}


# ---------------------------------------------------------------- testbed C

def load_ids(folder: Path, name: str) -> torch.Tensor:
    return torch.from_numpy(np.fromfile(folder / f"{name}.bin", dtype=np.uint8).astype(np.int64))


def train_base(params: Params, generated: Path, out: Path, seed: int) -> list[float]:
    m = params.model
    config = TinyLMConfig(**m.model_dump())
    model = build_model(config, CHAR_VOCAB, seed)
    p = params.pretrain
    setting = TrainSetting(p.steps, p.batch, p.lr)
    losses = pretrain(model, load_ids(generated, "pretrain"), setting, m.context, seed)
    save_model(model, out, CHAR_VOCAB, config)
    return losses


def finetune_run(params: Params, generated: Path, base_folder: Path, method: str, lr: float, scale: float,
                 seed: int, eval_seed: int) -> dict:
    """One fine-tuning run, evaluated on the validation windows (`final_eval`: the grid point is chosen on it) and
    on the test windows (`final_test`: the numbers reported), both fixed draws from `eval_seed`."""
    base, _, config = load_model(base_folder)
    f = params.finetune
    val, test = (fixed_windows(load_ids(generated, name), config.context, f.eval_windows, eval_seed)
                 for name in ("finetune_val", "finetune_test"))
    setting = FinetuneSetting(method, f.rank, lr, scale, f.steps, f.batch, config.context, f.eval_every)
    result = finetune(copy.deepcopy(base), load_ids(generated, "finetune_train"), val, setting, seed, test)
    return {"method": method, "lr": lr, "scale": scale, "evals": result["evals"], "final_eval": result["evals"][-1][1],
            "test_evals": result["test_evals"], "final_test": result["test_evals"][-1][1],
            "step_times": result["step_times"], "train_losses": result["train_losses"],
            "left_change_median": result["left_change_median"]}
