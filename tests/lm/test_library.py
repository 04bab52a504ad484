"""tasks/lm: models from a config (seeded, safetensors round trip), the chain-arithmetic task, sampling, SFT,
log-probs, GRPO advantages, the stdlib corpus ids."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from tasks.lm import chain_arith as task
from tasks.lm.corpus import CHAR_VOCAB, stdlib_corpus, windows
from tasks.lm.grpo import group_advantages, policy_loss
from tasks.lm.model import TinyLMConfig, build_model, load_model, num_parameters, save_model
from tasks.lm.sampling import generate_completions
from tasks.lm.sequences import completion_logprobs, pack
from tasks.lm.sft import train_sft
from tasks.lm.training import TrainSetting
from tasks.train.corpus import VOCAB as CORPUS_CHARS

V = task.VOCAB
SMALL = TinyLMConfig(d_model=32, n_layers=1, n_heads=2)


def test_model_seeded_and_saved_as_safetensors(tmp_path):
    a, b, c = (build_model(SMALL, V, seed) for seed in (3, 3, 4))
    x = torch.tensor([task.ChainProblem(1, ("+",), (2,)).prompt_ids()])
    assert torch.equal(a(x).logits, b(x).logits) and not torch.equal(a(x).logits, c(x).logits)
    save_model(a, tmp_path / "m", V, SMALL)
    assert (tmp_path / "m" / "model.safetensors").exists() and not list((tmp_path / "m").glob("*.bin"))
    loaded, vocab, config = load_model(tmp_path / "m")
    assert vocab == V and config == SMALL and torch.equal(loaded(x).logits, a(x).logits)
    llama = build_model(TinyLMConfig(d_model=32, n_layers=1, n_heads=2, arch="llama"), V, 0)
    assert llama(x).logits.shape == (1, x.shape[1], V.size) and num_parameters(llama) > 0
    with pytest.raises(ValueError, match="n_heads"):
        TinyLMConfig(d_model=30, n_heads=4)


def test_chain_arith_reference_teacher_and_checker():
    rng = np.random.default_rng(0)
    problem = task.ChainProblem(7, ("+", "*", "-"), (5, 3, 9))
    assert problem.chain() == [2, 6, 7] and problem.answer == 7
    reference = task.reference_completion(problem)
    assert V.decode(reference) == ["2", "6", "7", "A", "7", "<eos>"] and task.reward(problem, reference, 3) == 1.0
    assert task.teacher_completion(problem, 0.0, rng) == (reference, False)
    wrong = reference[:-2] + [V.index["3"], V.eos]
    for bad in (wrong, reference[:-1], [V.index["A"], V.index["7"], V.eos], reference[:2] + [V.index["+"]] + reference[2:],
                [V.index["1"]] * 3 + reference):
        assert task.reward(problem, bad, 3) == 0.0
    noisy = [task.teacher_completion(task.sample_problem(rng, 2, 4), 0.5, rng) for _ in range(200)]
    assert 0.5 < np.mean([flag for _, flag in noisy]) < 1.0
    for _ in range(50):  # p_err = 1: every step is wrong relative to the value the trace itself wrote before it
        p = task.sample_problem(rng, 3, 5)
        ids, flag = task.teacher_completion(p, 1.0, rng)
        values = [int(t) for t in V.decode(ids[:p.k])]
        previous = [p.x0] + values[:-1]
        assert flag and all(v != task.apply(op, y, d) for v, op, y, d in zip(values, p.ops, previous, p.digits))
        assert ids[p.k + 1] == ids[p.k - 1]  # the answer repeats the last step
    val = task.distinct_problems(rng, 100, 2, 3)
    test = task.distinct_problems(rng, 200, 2, 3, exclude=set(val))
    assert len(set(val)) == 100 and len(set(test)) == 200 and not set(val) & set(test)


def test_sampling_left_padding_and_seeds():
    model = build_model(SMALL, V, 0)
    rng = np.random.default_rng(1)
    prompts = [task.sample_problem(rng, 2, 5).prompt_ids() for _ in range(12)]
    kwargs = {"max_new_tokens": 8, "eos": V.eos, "pad": V.pad}
    batched = generate_completions(model, prompts, greedy=True, **kwargs)
    assert batched == [generate_completions(model, [p], greedy=True, **kwargs)[0] for p in prompts]
    a = generate_completions(model, prompts, n_per_prompt=3, temperature=0.75, seed=5, **kwargs)
    torch.rand(7)  # the global RNG's state does not matter
    assert a == generate_completions(model, prompts, n_per_prompt=3, temperature=0.75, seed=5, **kwargs)
    assert a != generate_completions(model, prompts, n_per_prompt=3, temperature=0.75, seed=6, **kwargs)
    assert all(len(c) <= 8 and (V.eos not in c or c.index(V.eos) == len(c) - 1) for c in a)


def test_completion_logprobs_and_sft():
    model = build_model(SMALL, V, 0)
    rng = np.random.default_rng(2)
    problems = [task.sample_problem(rng, 2, 4) for _ in range(5)]
    prompts, completions = [p.prompt_ids() for p in problems], [task.reference_completion(p) for p in problems]
    batch = pack(prompts, completions, V.pad)
    logp = completion_logprobs(model, batch)
    for i, (p, c) in enumerate(zip(prompts, completions)):  # row by row, unpadded
        logits = model(torch.tensor([p + c])).logits[0]
        manual = F.log_softmax(logits[len(p) - 1:-1], -1)[torch.arange(len(c)), torch.tensor(c)]
        assert torch.allclose(logp[i, :len(c)], manual, atol=1e-6) and (logp[i, len(c):] == 0).all()
    losses = train_sft(model, prompts, completions, TrainSetting(steps=30, batch=8, lr=3e-3), seed=0, pad=V.pad)
    assert losses[-1] < 0.5 * losses[0]


def test_advantages_and_ratio_one_loss():
    G = 6
    rewards = torch.tensor([[0.0, 0, 0, 0, 0, 1], [1.0] * G])
    A = group_advantages(rewards)
    std = torch.tensor([0.0] * 5 + [1.0]).std(unbiased=True)
    assert torch.isclose(A[0, 5], (1 - 1 / G) / (std + 1e-4)) and (A[1] == 0).all()
    logp = torch.randn(12, 4, dtype=torch.float64, requires_grad=True)
    mask = torch.ones(12, 4)
    mask[0, 2:] = 0
    weights = torch.rand(12, 4, dtype=torch.float64)
    for aggregation in ("sequence", "token"):
        loss = policy_loss(logp, A.flatten(), mask, aggregation=aggregation, weights=weights)
        wa = weights * A.flatten()[:, None] * mask
        expected = -(wa.sum(1) / mask.sum(1)).mean() if aggregation == "sequence" else -wa.sum() / mask.sum()
        assert torch.isclose(loss, expected)  # mu = 1: the value is -mean(w A) ...
        (grad,) = torch.autograd.grad(loss, logp)
        surrogate = policy_loss(logp, A.flatten(), mask, aggregation=aggregation, weights=weights,
                                old_logp=torch.zeros_like(logp), eps_clip=1e9)  # ... its gradient that of w A log pi
        assert torch.allclose(grad, torch.autograd.grad(surrogate, logp)[0] / torch.exp(logp).detach())


def test_stdlib_corpus_ids_share_the_char_lm_vocabulary():
    corpus = stdlib_corpus(5000)
    assert int(corpus.train.max()) < CHAR_VOCAB.size and CHAR_VOCAB.tokens[:len(CORPUS_CHARS)] == tuple(CORPUS_CHARS)
    w = windows(corpus.train, 16, 4, torch.Generator().manual_seed(0))
    assert w.shape == (4, 16)


def test_field_tools_work_unchanged():
    """peft LoRA on the Llama variant, and transformers' assisted generation (a draft model) on GPT-2: greedy
    assisted decoding gives the target's own greedy output."""
    from peft import LoraConfig, get_peft_model

    llama = build_model(TinyLMConfig(d_model=32, n_layers=1, n_heads=2, arch="llama"), V, 0)
    lora = get_peft_model(llama, LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"]))
    trainable = sum(p.numel() for p in lora.parameters() if p.requires_grad)
    assert 0 < trainable < num_parameters(llama) // 4
    target, draft = build_model(SMALL, V, 0), build_model(SMALL, V, 1)
    prompt = torch.tensor([task.ChainProblem(3, ("+", "*"), (4, 7)).prompt_ids()])
    plain = target.generate(prompt, max_new_tokens=6, do_sample=False, pad_token_id=V.pad, eos_token_id=V.eos)
    assisted = target.generate(prompt, max_new_tokens=6, do_sample=False, pad_token_id=V.pad, eos_token_id=V.eos,
                               assistant_model=draft)
    assert torch.equal(plain, assisted)
