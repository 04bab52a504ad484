"""MetaDistill pretraining: the student rolls out its own trajectory from a fresh population on each training
function and, generation by generation, matches the stitched teacher distribution at the end of the current
segment by KL(student || teacher); one AdamW step per generation over the five functions, the population detached
between generations (one-generation truncated backprop)."""
from __future__ import annotations

import copy
import time

import numpy as np
import torch

from tasks.core.seeding import derive_seed

from .kl import align_index, kl_norm, population_gaussian
from .knowledge import training_function
from .les import LES
from .rollout import DTYPE


def adamw(model: LES, lr: float, weight_decay: float) -> torch.optim.AdamW:
    """AdamW with weight decay on the weight matrices only (not on biases)."""
    decay = [p for name, p in model.named_parameters() if not name.endswith("bias")]
    rest = [p for name, p in model.named_parameters() if name.endswith("bias")]
    return torch.optim.AdamW([{"params": decay, "weight_decay": weight_decay}, {"params": rest, "weight_decay": 0.0}],
                             lr=lr)


def distill(model: LES, knowledge: list[list[dict]], popsize: int, interval: int, epochs: int, lr: float,
            weight_decay: float, clip: float, warmup: int, seed: int) -> dict:
    """Train `model` in place on `knowledge` (episodes x functions of {function, bias, means, covs}); returns the
    best-epoch state (lowest mean loss after `warmup` epochs; the last epoch when none), the loss per epoch and
    the wall time."""
    start = time.perf_counter()
    optimiser = adamw(model, lr, weight_decay)
    losses, best_state, best_loss, best_epoch = [], copy.deepcopy(model.state_dict()), np.inf, epochs - 1
    for epoch in range(epochs):
        episode = knowledge[epoch % len(knowledge)]
        runs = []
        for k, entry in enumerate(episode):
            function = training_function(entry)
            generator = torch.Generator().manual_seed(derive_seed(seed, "distill", epoch, k))
            lo, hi = torch.as_tensor(function.lower, dtype=DTYPE), torch.as_tensor(function.upper, dtype=DTYPE)
            x = lo + (hi - lo) * torch.rand(popsize, len(lo), generator=generator, dtype=DTYPE)
            runs.append({"f": function, "lo": lo, "hi": hi, "gen": generator, "x": x,
                         "values": torch.as_tensor(function(x.numpy()), dtype=DTYPE),
                         "state": model.initial_state(lo, hi, generator), "means": torch.as_tensor(entry["means"]),
                         "covs": torch.as_tensor(entry["covs"])})
        generations = len(runs[0]["means"])
        epoch_losses = []
        for g in range(generations):
            target = align_index(g, interval, generations)
            loss = 0.0
            for run in runs:
                state = model.update(run["state"], run["x"], run["values"])
                x, _ = model.sample(state, popsize, run["lo"], run["hi"], run["gen"])
                mu_p, cov_p = population_gaussian(x)
                loss = loss + kl_norm(mu_p, cov_p, run["means"][target], run["covs"][target]) / len(runs)
                run["state"], run["x"] = state.detach(), x.detach()
                run["values"] = torch.as_tensor(run["f"](run["x"].numpy()), dtype=DTYPE)
            optimiser.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            optimiser.step()
            epoch_losses.append(float(loss.detach()))
        losses.append(float(np.mean(epoch_losses)))
        if epoch >= warmup and losses[-1] < best_loss:
            best_loss, best_epoch, best_state = losses[-1], epoch, copy.deepcopy(model.state_dict())
    if not np.isfinite(best_loss):  # no epoch after the warm-up: keep the final parameters
        best_state = copy.deepcopy(model.state_dict())
    return {"best_state": best_state, "best_epoch": best_epoch, "losses": losses,
            "wall_time_s": time.perf_counter() - start}
