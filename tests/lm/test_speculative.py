"""tasks/lm/speculative.py: the lossless rejection sampler, E[tokens per verification], greedy SD = AR greedy =
transformers' assisted generation, determinism (spec §10 tests 1-3, 7)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from tasks.lm.corpus import CHAR_VOCAB
from tasks.lm.model import TinyLMConfig, build_model
from tasks.lm.speculative import accept_greedy, accept_sampled, check_lengths, decode, expected_tokens, request_rng

V = 8


def emitted_distribution(p, q, draws, seed):
    rng = np.random.default_rng(seed)
    counts = np.zeros(V)
    accepted = 0
    for x in rng.choice(V, size=draws, p=q).tolist():
        emitted, a = accept_sampled(np.stack([p, p]), q[None], [x], rng)
        counts[emitted[0]] += 1
        accepted += a
    return counts / draws, accepted / draws


@pytest.mark.parametrize("case", ["random", "equal", "disjoint"])
def test_rejection_sampler_reproduces_p(case):
    rng = np.random.default_rng(1)
    p, q = rng.dirichlet(np.ones(V)), rng.dirichlet(np.ones(V))
    if case == "equal":
        q = p
    if case == "disjoint":
        p, q = np.r_[p[:4], np.zeros(4)], np.r_[np.zeros(4), q[4:]]
        p, q = p / p.sum(), q / q.sum()
    freq, acceptance = emitted_distribution(p, q, 40_000, 2)
    assert 0.5 * np.abs(freq - p).sum() < 0.012
    assert acceptance == pytest.approx(np.minimum(p, q).sum(), abs=0.012)
    if case == "equal":
        assert acceptance == 1.0
    if case == "disjoint":
        assert acceptance == 0.0


def test_expected_tokens_per_verification_matches_formula():
    """Positions with per-token acceptance exactly alpha (sum min(p, q) = alpha, independent positions)."""
    alpha, k, draws = 0.6, 4, 20_000
    p = np.array([alpha, 1 - alpha, 0.0])
    q = np.array([alpha, 0.0, 1 - alpha])  # sum min = alpha
    rng = np.random.default_rng(3)
    total = 0
    for _ in range(draws):
        drafts = rng.choice(3, size=k, p=q).tolist()
        emitted, _ = accept_sampled(np.tile(p, (k + 1, 1)), np.tile(q, (k, 1)), drafts, rng)
        total += len(emitted)
    assert total / draws == pytest.approx(expected_tokens(alpha, k), rel=0.01)
    assert expected_tokens(1.0, k) == k + 1 and expected_tokens(0.0, k) == 1


def test_greedy_rule():
    assert accept_greedy([1, 2, 3, 4], [1, 2, 3]) == ([1, 2, 3, 4], 3)
    assert accept_greedy([1, 5, 3, 4], [1, 2, 3]) == ([1, 5], 1)
    assert accept_greedy([7], []) == ([7], 0)


@pytest.fixture(scope="module")
def models():
    torch.set_num_threads(1)
    target = build_model(TinyLMConfig(d_model=64, n_layers=2, n_heads=4, context=64), CHAR_VOCAB, 11)
    drafter = build_model(TinyLMConfig(d_model=32, n_layers=1, n_heads=2, context=64), CHAR_VOCAB, 12)
    for model in (target, drafter):  # sharper random logits: no near-ties (sampling at T = 30 flattens them again)
        with torch.no_grad():
            model.lm_head.weight.mul_(40.0)
    prompts = [request_rng(0, i, 9).integers(0, 97, size=12 + 3 * i).tolist() for i in range(4)]
    return target, drafter, prompts


def test_greedy_sd_equals_ar_and_self_drafting_accepts_everything(models):
    target, drafter, prompts = models
    ar = decode(target, None, prompts, max_new=10, k=0, temperature=0, batch=3, seed=0)
    for k in (1, 3):
        sd = decode(target, drafter, prompts, max_new=10, k=k, temperature=0, batch=3, seed=0)
        assert sd.outputs == ar.outputs
    same = decode(target, target, prompts, max_new=10, k=3, temperature=0, batch=4, seed=0)
    assert same.outputs == ar.outputs and same.accepted == same.drafted
    # k + 1 tokens per verification, except each request's last, truncated one
    assert same.verifications == len(prompts) * -(-10 // 4)


def test_greedy_sd_equals_transformers_assisted_generation(models):
    target, drafter, prompts = models
    ours = decode(target, drafter, prompts, max_new=10, k=4, temperature=0, batch=4, seed=0)
    for prompt, mine in zip(prompts, ours.outputs):
        ids = torch.tensor([prompt])
        out = target.generate(ids, attention_mask=torch.ones_like(ids), assistant_model=drafter, do_sample=False,
                              max_new_tokens=10, min_new_tokens=10, num_assistant_tokens=4, pad_token_id=CHAR_VOCAB.pad)
        assert out[0, len(prompt):].tolist() == mine


def test_sampled_decoding_is_deterministic(models):
    target, drafter, prompts = models
    runs = [decode(target, drafter, prompts, max_new=8, k=2, temperature=30.0, batch=2, seed=5) for _ in range(2)]
    assert runs[0].outputs == runs[1].outputs and runs[0].accepted == runs[1].accepted
    other = decode(target, drafter, prompts, max_new=8, k=2, temperature=30.0, batch=2, seed=6)
    assert other.outputs != runs[0].outputs


def test_lengths_must_fit_the_context():
    check_lengths([[0] * 50], 10, 4, 64)
    with pytest.raises(ValueError, match="exceeds the model context"):
        check_lengths([[0] * 51], 10, 4, 64)
