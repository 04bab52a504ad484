"""One RL fine-tuning run on chain arithmetic: GRPO or lambda-GRPO from an SFT policy (spec lambda_grpo §3.4, §6.2).

Both methods share everything but the per-token weights: the same SFT checkpoint, prompt stream
(derive_seed(seed, "rl-prompts")), sampling seeds per step, Adam and learning rate, mu = 1, beta = 0. So their
step-0 batches are identical. Greedy validation accuracy and sampled accuracy every `eval_every` steps; the
test accuracy (greedy) of the policy at the best validation step.
"""
from __future__ import annotations

import copy
import time
from dataclasses import dataclass

import numpy as np
import torch

from tasks.core.seeding import derive_seed
from tasks.lm import chain_arith as task
from tasks.lm.grpo import group_advantages, policy_loss
from tasks.lm.sampling import generate_completions
from tasks.lm.sequences import completion_logprobs, pack

from .process_sets import tree_stats, weight_matrix

METHODS = ("grpo", "lambda_grpo")


@dataclass(frozen=True)
class RLSetting:
    steps: int
    prompts_per_step: int
    group_size: int
    lr: float
    temperature: float
    aggregation: str
    k_min: int
    k_max: int
    eval_every: int
    eval_samples: int
    modulus: int = 10


def greedy_rewards(model, problems: list[task.ChainProblem], k_max: int) -> list[float]:
    """Each problem's reward under greedy decoding (the per-prompt view the precondition's interval needs)."""
    completions = generate_completions(model, [p.prompt_ids() for p in problems], max_new_tokens=task.max_completion_length(k_max),
                                       eos=task.VOCAB.eos, pad=task.VOCAB.pad, greedy=True)
    return [task.reward(p, c, k_max) for p, c in zip(problems, completions)]


def accuracy(model, problems: list[task.ChainProblem], k_max: int, *, greedy: bool, samples: int = 1,
             temperature: float = 1.0, seed: int = 0) -> float:
    """Mean reward over the problems: greedy decoding, or `samples` completions each at `temperature`."""
    if greedy:
        return float(np.mean(greedy_rewards(model, problems, k_max)))
    completions = generate_completions(model, [p.prompt_ids() for p in problems], n_per_prompt=samples,
                                       max_new_tokens=task.max_completion_length(k_max), eos=task.VOCAB.eos,
                                       pad=task.VOCAB.pad, temperature=temperature, seed=seed)
    return float(np.mean([task.reward(problems[i // samples], c, k_max) for i, c in enumerate(completions)]))


def sample_groups(model, problems: list[task.ChainProblem], setting: RLSetting, seed: int):
    """G completions per problem (prompt-major), their rewards [P, G] and advantages [P, G]."""
    G = setting.group_size
    completions = generate_completions(model, [p.prompt_ids() for p in problems], n_per_prompt=G,
                                       max_new_tokens=task.max_completion_length(setting.k_max), eos=task.VOCAB.eos,
                                       pad=task.VOCAB.pad, temperature=setting.temperature, seed=seed)
    groups = [completions[g * G:(g + 1) * G] for g in range(len(problems))]
    rewards = torch.tensor([[task.reward(p, c, setting.k_max) for c in group] for p, group in zip(problems, groups)],
                           dtype=torch.float64)
    return groups, rewards, group_advantages(rewards)


def rl_step(model, optimizer, method: str, problems, setting: RLSetting, seed: int) -> dict:
    """Sample, weigh, one Adam step on the batch; the step's statistics."""
    groups, rewards, advantages = sample_groups(model, problems, setting, seed)
    prompts = [p.prompt_ids() for p in problems for _ in range(setting.group_size)]
    batch = pack(prompts, [c for group in groups for c in group], task.VOCAB.pad)
    weights = weight_matrix(groups, method, batch.mask.shape[1])
    model.train()
    loss = policy_loss(completion_logprobs(model, batch), advantages.flatten(), batch.mask,
                       aggregation=setting.aggregation, weights=weights)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    model.eval()
    stats = [tree_stats(group) for group in groups]
    return {"reward": float(rewards.mean()), "loss": loss.item(),
            "nonconstant_groups": float((rewards.std(1) > 0).double().mean()),
            "nodes": float(np.mean([s.nodes for s in stats])),
            "mean_lambda": sum(s.sum_lambda for s in stats) / sum(s.tokens for s in stats),
            "shared_token_fraction": sum(s.shared_tokens for s in stats) / sum(s.tokens for s in stats),
            "nontrivial_groups": int(sum(s.nontrivial for s in stats)), "groups": len(stats),
            "lambda_histogram": np.sum([s.histogram for s in stats], axis=0).tolist()}


def run_rl(model, method: str, setting: RLSetting, seed: int, val: list[task.ChainProblem],
           test: list[task.ChainProblem] | None) -> dict:
    """RL-tune `model` in place; the curves (per evaluation and per step) and the test accuracy at the best
    validation step (the first of equal ones; None without a test set: the learning-rate sweep)."""
    if method not in METHODS:
        raise ValueError(f"method: must be one of {METHODS}, got {method!r}")
    prompt_rng = np.random.default_rng(derive_seed(seed, "rl-prompts"))
    optimizer = torch.optim.Adam(model.parameters(), lr=setting.lr)
    evals, steps, best = [], [], (-1.0, None, None)
    for step in range(setting.steps + 1):
        if step % setting.eval_every == 0 or step == setting.steps:
            greedy = accuracy(model, val, setting.k_max, greedy=True)
            sampled = accuracy(model, val, setting.k_max, greedy=False, samples=setting.eval_samples,
                               temperature=setting.temperature, seed=derive_seed(seed, "eval", step))
            evals.append({"step": step, "greedy": greedy, "sampled": sampled})
            if greedy > best[0]:
                best = (greedy, step, copy.deepcopy(model.state_dict()))
        if step == setting.steps:
            break
        problems = [task.sample_problem(prompt_rng, setting.k_min, setting.k_max, setting.modulus)
                    for _ in range(setting.prompts_per_step)]
        started = time.perf_counter()
        row = rl_step(model, optimizer, method, problems, setting, derive_seed(seed, "rl-sample", step))
        steps.append(row | {"wall_time_s": time.perf_counter() - started})
    return {"method": method, "seed": seed, "evals": evals, "steps": steps, "best_step": best[1],
            "best_val": best[0], "test_at_best": None if test is None else accuracy_of_state(model, best[2], test, setting.k_max)}


def accuracy_of_state(model, state: dict, test: list[task.ChainProblem], k_max: int) -> float:
    """Greedy test accuracy of `model` with the weights `state`, the model's own weights restored after."""
    final_state = copy.deepcopy(model.state_dict())
    model.load_state_dict(state)
    test_accuracy = accuracy(model, test, k_max, greedy=True)
    model.load_state_dict(final_state)
    return test_accuracy
