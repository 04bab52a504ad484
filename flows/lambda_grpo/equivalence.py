"""C1: GRPO's gradient equals that of its PRM form, exactly, under token-mean aggregation and mu = 1 (spec §3.2).

    grad L_GRPO       = grad of -(1/N_tok) sum_nodes |lambda| A(lambda) log pi(token of the node)
    grad L_lambdaGRPO = grad of -(1/N_tok) sum_nodes          A(lambda) log pi(token of the node)

A trie node is one token in one context, shared by the |lambda| members of its process set, so the PRM form
scores it once (through its first member's row). Computed in float64 on groups sampled from a policy; the
controls say the identity is not vacuous: GRPO and lambda-GRPO gradients differ, and under sequence-mean
aggregation the PRM form is only approximate.
"""
from __future__ import annotations

import torch

from tasks.lm.grpo import group_advantages, policy_loss
from tasks.lm.sequences import completion_logprobs, pack

from .process_sets import process_trie, weight_matrix


def prm_form_loss(logp: torch.Tensor, groups: list[list[list[int]]], advantages: torch.Tensor, n_tokens: float,
                  frequency: bool) -> torch.Tensor:
    """-(1/N_tok) sum over trie nodes of [|lambda|] A(lambda) log pi, each node read from its first member's row."""
    terms = []
    G = len(groups[0])
    for g, group in enumerate(groups):
        trie = process_trie(group)
        first: dict[int, tuple[int, int]] = {}
        for i, path in enumerate(trie.node):
            for t, n in enumerate(path):
                first.setdefault(n, (g * G + i, t))
        for n, members in enumerate(trie.members):
            row, t = first[n]
            a_node = advantages[g, members].mean()
            terms.append((len(members) if frequency else 1.0) * a_node * logp[row, t])
    return -torch.stack(terms).sum() / n_tokens


def _grad(model, loss: torch.Tensor) -> torch.Tensor:
    grads = torch.autograd.grad(loss, [p for p in model.parameters()], retain_graph=True)
    return torch.cat([g.reshape(-1) for g in grads])


def relative_error(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).norm() / b.norm())


def gradient_identity(model, prompts: list[list[int]], groups: list[list[list[int]]], rewards: torch.Tensor,
                      pad: int) -> dict:
    """Relative errors between the GRPO / lambda-GRPO gradients and their PRM forms on one batch of groups (model
    in float64), and the controls."""
    G = len(groups[0])
    advantages = group_advantages(rewards.to(torch.float64))
    batch = pack([p for p in prompts for _ in range(G)], [c for group in groups for c in group], pad)
    logp = completion_logprobs(model, batch)
    n_tokens = float(batch.mask.sum())
    weights = weight_matrix(groups, "lambda_grpo", batch.mask.shape[1])
    grads = {
        "grpo": _grad(model, policy_loss(logp, advantages.flatten(), batch.mask, aggregation="token")),
        "lambda_grpo": _grad(model, policy_loss(logp, advantages.flatten(), batch.mask, aggregation="token",
                                                weights=weights)),
        "prm": _grad(model, prm_form_loss(logp, groups, advantages, n_tokens, frequency=True)),
        "prm_lambda": _grad(model, prm_form_loss(logp, groups, advantages, n_tokens, frequency=False)),
        "grpo_sequence": _grad(model, policy_loss(logp, advantages.flatten(), batch.mask, aggregation="sequence")),
    }
    return {"grpo_vs_prm": relative_error(grads["grpo"], grads["prm"]),
            "lambda_grpo_vs_prm_without_frequency": relative_error(grads["lambda_grpo"], grads["prm_lambda"]),
            "control_grpo_vs_lambda_grpo": relative_error(grads["grpo"], grads["lambda_grpo"]),
            "control_sequence_mean_vs_prm": relative_error(grads["grpo_sequence"], grads["prm"]),
            "groups": len(groups), "completion_tokens": n_tokens,
            "gradient_norm_grpo": float(grads["grpo"].norm())}
