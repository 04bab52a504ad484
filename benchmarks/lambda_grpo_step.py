"""lambda-GRPO vs GRPO: the cost of one RL step (the spec's C4) and of the process-set trie vs group size and length.

1. RL steps of the default profile's policy (tiny GPT-2, d 64, 2 layers; 16 prompts x G 6, K in [2, 6]): both
   methods step from copies of one model on the same prompts and sampling seeds, alternating step by step so
   they meet the same machine load; median wall time per step, and the time and peak memory of the weights alone.
2. The trie (process_counts) on random groups whose completions share prefixes (tokens from 4 symbols), for
   G in {6, 16, 64} x L in {16, 128, 1024}: seconds per group and per token (O(G L) expected: flat per token).
"""
from __future__ import annotations

import copy
import time
import tracemalloc

import numpy as np
import torch

from flows.lambda_grpo.process_sets import process_counts, weight_matrix
from flows.lambda_grpo.rl import RLSetting, rl_step
from tasks.core.device import single_torch_thread
from tasks.core.seeding import derive_seed
from tasks.lm import chain_arith as task
from tasks.lm.model import TinyLMConfig, build_model

from .common import write_result

STEPS = 20
SETTING = RLSetting(steps=STEPS, prompts_per_step=16, group_size=6, lr=1e-4, temperature=0.75, aggregation="sequence",
                    k_min=2, k_max=6, eval_every=STEPS, eval_samples=1)
GROUP_SIZES, LENGTHS = (6, 16, 64), (16, 128, 1024)


def step_times() -> dict:
    base = build_model(TinyLMConfig(), task.VOCAB, seed=0)
    models = {m: copy.deepcopy(base) for m in ("grpo", "lambda_grpo")}
    optimizers = {m: torch.optim.Adam(model.parameters(), lr=SETTING.lr) for m, model in models.items()}
    rng = np.random.default_rng(0)
    times = {m: [] for m in models}
    for step in range(STEPS):
        problems = [task.sample_problem(rng, SETTING.k_min, SETTING.k_max) for _ in range(SETTING.prompts_per_step)]
        for method in (("grpo", "lambda_grpo") if step % 2 else ("lambda_grpo", "grpo")):
            started = time.perf_counter()
            rl_step(models[method], optimizers[method], method, problems, SETTING, derive_seed(0, "bench", step))
            times[method].append(time.perf_counter() - started)
    return {m: float(np.median(t)) for m, t in times.items()}


def weights_cost(groups: list[list[list[int]]]) -> dict:
    out = {}
    for method in ("grpo", "lambda_grpo"):
        tracemalloc.start()
        started = time.perf_counter()
        for _ in range(20):
            weight_matrix(groups, method, max(len(c) for g in groups for c in g))
        out[method] = {"seconds": (time.perf_counter() - started) / 20, "peak_bytes": tracemalloc.get_traced_memory()[1]}
        tracemalloc.stop()
    return out


def random_group(rng: np.random.Generator, G: int, L: int) -> list[list[int]]:
    """G completions of length L: each copies a random earlier member's prefix, then continues at random."""
    group = [rng.integers(4, size=L).tolist()]
    for _ in range(G - 1):
        parent = group[int(rng.integers(len(group)))]
        cut = int(rng.integers(L))
        group.append(parent[:cut] + rng.integers(4, size=L - cut).tolist())
    return group


def _timed(function, groups) -> float:
    started = time.perf_counter()
    for group in groups:
        function(group)
    return (time.perf_counter() - started) / len(groups)


def trie_scaling() -> list[dict]:
    rng = np.random.default_rng(1)
    rows = []
    for G in GROUP_SIZES:
        for L in LENGTHS:
            groups = [random_group(rng, G, L) for _ in range(5)]
            seconds = min(_timed(process_counts, groups) for _ in range(3))  # best of 3: machine load only adds
            rows.append({"group_size": G, "length": L, "seconds_per_group": seconds,
                         "microseconds_per_token": 1e6 * seconds / (G * L)})
    return rows


def main() -> dict:
    single_torch_thread()
    steps = step_times()
    rng = np.random.default_rng(2)
    groups = [random_group(rng, 6, 9) for _ in range(16)]
    weights = weights_cost(groups)
    scaling = trie_scaling()
    per_token = [r["microseconds_per_token"] for r in scaling]
    result = {"rl_step_median_s": steps, "rl_step_ratio_lambda_over_grpo": steps["lambda_grpo"] / steps["grpo"],
              "weights_batch_16x6": weights,
              "weights_time_ratio_lambda_over_grpo": weights["lambda_grpo"]["seconds"] / weights["grpo"]["seconds"],
              "weights_share_of_lambda_step": weights["lambda_grpo"]["seconds"] / steps["lambda_grpo"],
              "trie_scaling": scaling,
              "trie_per_token_max_over_min": max(per_token) / min(per_token)}
    write_result("lambda_grpo_step", result)
    return result


if __name__ == "__main__":
    import json

    print(json.dumps(main(), indent=1))
