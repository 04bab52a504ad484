"""Our GRPO loss equals TRL 1.16's (GRPOTrainer._compute_loss, called as TRL runs it) on the same batch, for both
aggregations, with and without clipping and KL: value and gradient to 1e-6."""
from __future__ import annotations

import types
from collections import defaultdict

import pytest
import torch
from accelerate import Accelerator
from trl import GRPOTrainer
from trl.trainer.utils import add_fused_lm_head

from tasks.lm import chain_arith as task
from tasks.lm.grpo import group_advantages, policy_loss
from tasks.lm.model import TinyLMConfig, build_model
from tasks.lm.sequences import completion_logprobs, pack

TRL_LOSS = {"sequence": "grpo", "token": "dapo"}


def trl_trainer_state(model, loss_type: str, beta: float) -> types.SimpleNamespace:
    """The attributes GRPOTrainer._compute_loss reads, as GRPOTrainer.__init__ sets them for these options
    (one process, no accumulation, no vLLM, no entropy masking or bonus)."""
    state = types.SimpleNamespace(
        model=model, loss_type=loss_type, beta=beta, epsilon_low=0.2, epsilon_high=0.2, top_entropy_quantile=1.0,
        off_policy_mask_threshold=None, importance_sampling_level="token", use_vllm=False,
        vllm_importance_sampling_correction=False, aux_loss_enabled=False, _entropy_bonus_enabled=False,
        current_gradient_accumulation_steps=1, accelerator=Accelerator(cpu=True),
        args=types.SimpleNamespace(delta=None, use_bias_correction_kl=False, steps_per_generation=1),
        _metrics={"train": defaultdict(list), "eval": defaultdict(list)})
    state._get_per_token_logps_and_entropies = types.MethodType(GRPOTrainer._get_per_token_logps_and_entropies, state)
    return state


def batch_of_groups(model, groups: int = 3, G: int = 4, seed: int = 0):
    """Groups of sampled completions of equal-length prompts (TRL's prompt block is then unpadded)."""
    from tasks.lm.sampling import generate_completions

    problems = [task.ChainProblem(d, ("+", "*"), (d, 3)) for d in range(groups)]
    prompts = [p.prompt_ids() for p in problems]
    completions = generate_completions(model, prompts, n_per_prompt=G, max_new_tokens=5, eos=task.VOCAB.eos,
                                       pad=task.VOCAB.pad, temperature=1.5, seed=seed)
    rewards = torch.tensor([[task.reward(p, c, 2) + 0.1 * j for j, c in enumerate(completions[g * G:(g + 1) * G])]
                            for g, p in enumerate(problems)], dtype=torch.float64)
    return [p for p in prompts for _ in range(G)], completions, group_advantages(rewards).flatten()


@pytest.mark.parametrize("aggregation", ["sequence", "token"])
@pytest.mark.parametrize("off_policy, beta", [(False, 0.0), (True, 0.04)])
def test_loss_equals_trl(aggregation, off_policy, beta):
    torch.manual_seed(0)
    model = build_model(TinyLMConfig(d_model=32, n_layers=1, n_heads=2), task.VOCAB, seed=1).double()
    prompts, completions, advantages = batch_of_groups(model)
    batch = pack(prompts, completions, task.VOCAB.pad)
    generator = torch.Generator().manual_seed(2)
    # mu > 1: pi_old differs from pi_theta by up to +-0.5 in log space, so the clip is active on some tokens
    old = (completion_logprobs(model, batch).detach() + (torch.rand(batch.mask.shape, generator=generator,
                                                                    dtype=torch.float64) - 0.5)) * batch.mask
    ref = old.flip(0) * batch.mask if beta else None

    ours_logp = completion_logprobs(model, batch)
    ours = policy_loss(ours_logp, advantages, batch.mask, aggregation=aggregation,
                       old_logp=old if off_policy else None, beta=beta, ref_logp=ref)
    ours_grad = torch.autograd.grad(ours, list(model.parameters()))

    add_fused_lm_head(model, temperature=1.0, outputs=("log_probs", "entropy"))
    prompt_ids = torch.tensor(prompts)  # equal lengths: no prompt padding
    inputs = {"prompt_ids": prompt_ids, "prompt_mask": torch.ones_like(prompt_ids),
              "completion_ids": batch.completion_ids, "completion_mask": batch.mask.long(),
              "advantages": advantages, "num_items_in_batch": batch.mask.sum()}
    if off_policy:
        inputs["old_per_token_logps"] = old
    if beta:
        inputs["ref_per_token_logps"] = ref
    state = trl_trainer_state(model, TRL_LOSS[aggregation], beta)
    theirs = GRPOTrainer._compute_loss(state, model, inputs)
    theirs_grad = torch.autograd.grad(theirs, list(model.parameters()))

    assert abs(ours.item() - theirs.item()) <= 1e-6 * max(1.0, abs(theirs.item()))
    for a, b in zip(ours_grad, theirs_grad):
        assert torch.allclose(a, b, atol=1e-6, rtol=1e-6)
    if off_policy:  # the clip is exercised
        assert ((torch.exp(ours_logp - old) - 1).abs() > 0.2)[batch.mask.bool()].any()
