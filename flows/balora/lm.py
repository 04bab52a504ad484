"""Testbed C's pieces for the stages: the corpora as ids, the tiny base model, and one fine-tuning run."""
from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import torch

from tasks.lm.corpus import CHAR_VOCAB
from tasks.lm.model import TinyLMConfig, build_model, load_model, save_model
from tasks.lm.pretrain import fixed_windows, pretrain
from tasks.lm.training import TrainSetting

from .finetune import FinetuneSetting, finetune
from .params import Params

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
                 seed: int, val_seed: int) -> dict:
    base, _, config = load_model(base_folder)
    f = params.finetune
    val = fixed_windows(load_ids(generated, "finetune_val"), config.context, f.eval_windows, val_seed)
    setting = FinetuneSetting(method, f.rank, lr, scale, f.steps, f.batch, config.context, f.eval_every)
    result = finetune(copy.deepcopy(base), load_ids(generated, "finetune_train"), val, setting, seed)
    return {"method": method, "lr": lr, "scale": scale, "evals": result["evals"],
            "final_eval": result["evals"][-1][1], "step_times": result["step_times"],
            "train_losses": result["train_losses"]}
