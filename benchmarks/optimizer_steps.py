"""Step time and persistent optimizer-state bytes of every optimizer of the four optimizer papers, on the
same char-LM (2 layers, d_model 64, ~117k parameters, batch 32, context 64), in one run, as ratios to AdamW
and to Muon. Each optimizer is timed over the same batches after a warm-up; the soft-phase optimizers
(SoftSignum, SoftMuon) are timed after their transition, where their extra work is. One torch thread.
On a CUDA machine the same script also times the GPU (`--device cuda`)."""
from __future__ import annotations

import argparse
from statistics import median
from time import perf_counter

import torch
from lion_pytorch import Lion

from tasks.core.device import resolve_device, single_torch_thread
from tasks.optim import LiMuon
from tasks.optim.muon import Muon, SoftMuon, muon_param_groups
from tasks.optim.polyak import IMASPSSafe, SPSSafe
from tasks.optim.prox_sgd import ProxSGD
from tasks.optim.sadam import SAdam
from tasks.optim.signum import Signum, SoftSignum
from tasks.train.charlm import CharLMConfig, CharTransformer, random_windows, split_matrix_params
from tasks.train.corpus import build_stdlib_corpus
from tasks.train.loop import state_bytes

from .common import write_result

WARMUP, TIMED, REPEATS = 5, 20, 3
TOTAL = WARMUP + TIMED  # the soft optimizers' transition falls inside the warm-up


def optimizers(model: torch.nn.Module) -> dict[str, torch.optim.Optimizer]:
    """Fresh optimizers over `model`, with the papers' default hyperparameters."""
    matrices, others = split_matrix_params(model)
    every = list(model.parameters())
    soft = dict(total_steps=TOTAL, alpha_sign=(WARMUP - 1) / TOTAL)
    return {
        "AdamW": lambda: torch.optim.AdamW(every, lr=3e-3),
        "Muon": lambda: Muon(muon_param_groups(matrices, others, lr=0.02, aux_lr=3e-3)),
        "Signum": lambda: Signum(every, lr=1e-3),
        "SoftSignum": lambda: SoftSignum(every, lr=1e-3, **soft),
        "SoftMuon": lambda: SoftMuon(muon_param_groups(matrices, others, lr=0.02, aux_lr=3e-3), **soft),
        "LiMuon_full": lambda: LiMuon(muon_param_groups(matrices, others, lr=0.02, aux_lr=3e-3), option=1),
        "LiMuon_r8": lambda: LiMuon(muon_param_groups(matrices, others, lr=0.02, aux_lr=3e-3), option=2, rank=8),
        "SAdam": lambda: SAdam(every, lr=1e-3),
        "ProxSGD": lambda: ProxSGD(every, lr=0.01),
        "SPSSafe": lambda: SPSSafe(every, M=1.0),
        "IMASPSSafe": lambda: IMASPSSafe(every, M=1.0),
        "Lion": lambda: Lion(every, lr=1e-4),
    }


def time_optimizer(make, model: torch.nn.Module, batches: list, device: str) -> tuple[float, int]:
    """Median seconds per step over the timed batches, and the optimizer's state bytes after them."""
    start_state = {k: v.clone() for k, v in model.state_dict().items()}
    optimizer = make()

    def closure_for(x, y):
        def closure(backward: bool = True):  # closure(backward=False): S-Adam's forward-only probes
            if backward:  # a probe must leave .grad alone: S-Adam's update reads it after the probes
                optimizer.zero_grad(set_to_none=False)
            with torch.set_grad_enabled(backward):
                logits = model(x)
                loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), y.flatten())
            if backward:
                loss.backward()
            return loss
        return closure

    times = []
    for step, (x, y) in enumerate(batches):
        if device == "cuda":
            torch.cuda.synchronize()
        began = perf_counter()
        optimizer.step(closure_for(x, y))
        if device == "cuda":
            torch.cuda.synchronize()
        if step >= WARMUP:
            times.append(perf_counter() - began)
    model.load_state_dict(start_state)
    return median(times), state_bytes(optimizer)


def main(device: str = "cpu") -> dict:
    device = resolve_device(device)
    if device == "cpu":
        single_torch_thread()
    corpus = build_stdlib_corpus(100_000)
    config = CharLMConfig()
    model = CharTransformer(config, seed=0).to(device)
    generator = torch.Generator().manual_seed(0)
    batches = [tuple(t.to(device) for t in random_windows(corpus.train, config.context, 32, generator))
               for _ in range(TOTAL)]
    results = {}
    for name, make in optimizers(model).items():
        runs = [time_optimizer(make, model, batches, device) for _ in range(REPEATS)]
        results[name] = {"step_ms": 1e3 * median(t for t, _ in runs), "state_bytes": runs[0][1]}
    for row in results.values():
        for reference in ("AdamW", "Muon"):
            row[f"time_vs_{reference}"] = row["step_ms"] / results[reference]["step_ms"]
            row[f"state_vs_{reference}"] = row["state_bytes"] / results[reference]["state_bytes"]
    parameters = sum(p.numel() for p in model.parameters())
    summary = {"device": device, "parameters": parameters, "batch": 32, "context": config.context,
               "timed_steps": TIMED, "repeats": REPEATS, "optimizers": results}
    write_result(f"optimizer_steps_{device}", summary)
    print(f"{'optimizer':14s} {'ms/step':>8s} {'x AdamW':>8s} {'x Muon':>7s} {'state kB':>9s} {'x AdamW':>8s} {'x Muon':>7s}")
    for name, row in results.items():
        print(f"{name:14s} {row['step_ms']:8.2f} {row['time_vs_AdamW']:8.2f} {row['time_vs_Muon']:7.2f} "
              f"{row['state_bytes'] / 1e3:9.1f} {row['state_vs_AdamW']:8.2f} {row['state_vs_Muon']:7.2f}")
    return summary


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--device", default="cpu", help="cpu, cuda or auto")
    main(parser.parse_args().device)
