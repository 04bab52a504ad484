"""The run behind `papers balora finetune`: load the user's tiny LM, fine-tune a LoRA / BaLoRA on their text ids,
save the adapter with peft's save_pretrained."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from tasks.core.device import single_torch_thread
from tasks.lm.model import load_model
from tasks.lm.pretrain import fixed_windows

from .finetune import FinetuneSetting, finetune

EVAL_WINDOWS = 32


def run_user_finetune(model_dir: Path, train: list[int], val: list[int], method: str, rank: int, lr: float,
                      scale: float, steps: int, batch: int, seed: int, out: Path) -> dict:
    single_torch_thread()
    base, _, config = load_model(model_dir)
    val_windows = fixed_windows(torch.tensor(val), config.context, EVAL_WINDOWS, seed)
    setting = FinetuneSetting(method, rank, lr, scale, steps, batch, config.context, eval_every=max(1, steps // 10))
    result = finetune(base, torch.tensor(train), val_windows, setting, seed)
    result["model"].save_pretrained(out)
    return {"method": method, "rank": rank, "lr": lr, "scale": scale, "steps": steps, "adapter": str(out),
            "initial_eval": result["evals"][0][1], "final_eval": result["evals"][-1][1], "evals": result["evals"],
            "median_step_s": float(np.median(result["step_times"]))}
