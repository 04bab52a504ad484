"""Spec §10 tests 3, 4, 8 (the C1 gradient identity on a 1-layer float64 model) and the RL run: determinism,
identical step-0 batches for both methods."""
from __future__ import annotations

import copy

import numpy as np
import torch

from flows.lambda_grpo.equivalence import gradient_identity
from flows.lambda_grpo.process_sets import weight_matrix
from flows.lambda_grpo.rl import RLSetting, run_rl, sample_groups
from tasks.lm import chain_arith as task
from tasks.lm.grpo import group_advantages, policy_loss
from tasks.lm.model import TinyLMConfig, build_model
from tasks.lm.sequences import completion_logprobs, pack

V = task.VOCAB
SETTING = RLSetting(steps=3, prompts_per_step=4, group_size=6, lr=1e-3, temperature=0.75, aggregation="sequence",
                    k_min=2, k_max=3, eval_every=2, eval_samples=2)


def small_model(dtype=torch.float32):
    return build_model(TinyLMConfig(d_model=32, n_layers=1, n_heads=2), V, 0).to(dtype)


def test_gradient_identity_c1():
    model = small_model(torch.float64)
    rng = np.random.default_rng(0)
    problems = [task.sample_problem(rng, 2, 3) for _ in range(8)]
    groups, rewards, _ = sample_groups(model, problems, SETTING, seed=1)
    rewards[:, 0] = 1.0 - rewards[:, 1]  # every group has a non-zero advantage somewhere
    out = gradient_identity(model, [p.prompt_ids() for p in problems], groups, rewards, V.pad)
    assert out["grpo_vs_prm"] <= 1e-8 and out["lambda_grpo_vs_prm_without_frequency"] <= 1e-8
    assert out["control_grpo_vs_lambda_grpo"] > 1e-3  # the identity is not vacuous


def _losses(model, groups, rewards, prompts):
    batch = pack([p for p in prompts for _ in range(len(groups[0]))], [c for g in groups for c in g], V.pad)
    logp = completion_logprobs(model, batch)
    A = group_advantages(rewards).flatten()
    out = {}
    for method in ("grpo", "lambda_grpo"):
        loss = policy_loss(logp, A, batch.mask, weights=weight_matrix(groups, method, batch.mask.shape[1]))
        out[method] = (loss, torch.cat([g.flatten() for g in torch.autograd.grad(loss, list(model.parameters()),
                                                                                   retain_graph=True)]))
    return out


def test_all_distinct_and_all_identical_limits():
    model = small_model(torch.float64)
    prompts = [task.ChainProblem(1, ("+", "+"), (2, 3)).prompt_ids()]
    distinct = [[[d, 4, V.eos] for d in range(6)]]  # differ at the first token: all weights 1
    out = _losses(model, distinct, torch.tensor([[1.0, 0, 0, 1, 0, 0]], dtype=torch.float64), prompts)
    assert torch.equal(out["grpo"][0], out["lambda_grpo"][0]) and torch.equal(out["grpo"][1], out["lambda_grpo"][1])
    identical = [[[3, 4, V.eos]] * 6]  # identical: every advantage 0, so no gradient
    out = _losses(model, identical, torch.ones(1, 6, dtype=torch.float64), prompts)
    assert all(float(g.abs().max()) == 0.0 for _, g in out.values())


def test_rl_run_is_deterministic_and_methods_share_step_zero():
    rng = np.random.default_rng(3)
    val = task.distinct_problems(rng, 8, 2, 3)
    test = task.distinct_problems(rng, 8, 2, 3, exclude=set(val))
    base = small_model()
    runs = {m: run_rl(copy.deepcopy(base), m, SETTING, 11, val, test) for m in ("grpo", "lambda_grpo")}
    again = run_rl(copy.deepcopy(base), "grpo", SETTING, 11, val, test)
    strip = lambda r: [{k: v for k, v in s.items() if k != "wall_time_s"} for s in r["steps"]]  # noqa: E731
    assert strip(again) == strip(runs["grpo"]) and again["evals"] == runs["grpo"]["evals"]
    first = {m: {k: v for k, v in strip(r)[0].items() if k != "loss"} for m, r in runs.items()}
    assert first["grpo"] == first["lambda_grpo"]  # the same SFT policy, prompts and sampling seed
    assert runs["grpo"]["evals"][0] == runs["lambda_grpo"]["evals"][0]
    assert [e["step"] for e in again["evals"]] == [0, 2, 3] and len(again["steps"]) == 3


def test_a_sweep_run_has_no_test_set_and_a_mod_7_run_trains_on_mod_7_prompts(monkeypatch):
    import dataclasses

    from flows.lambda_grpo import rl

    drawn = []
    sample = rl.task.sample_problem
    monkeypatch.setattr(rl.task, "sample_problem", lambda *a: drawn.append(sample(*a)) or drawn[-1])
    rng = np.random.default_rng(4)
    val = task.distinct_problems(rng, 8, 2, 3, modulus=7)
    setting = dataclasses.replace(SETTING, modulus=7)
    run = run_rl(small_model(), "lambda_grpo", setting, 11, val, None)
    assert run["test_at_best"] is None and run["best_val"] >= 0
    assert drawn and all(p.modulus == 7 and max(p.digits) < 7 for p in drawn)
