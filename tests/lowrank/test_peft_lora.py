"""Balancing peft LoRA adapters in place (notation flip: the paper's A is lora_B, its B is lora_A) and the
Trainer callback."""
from __future__ import annotations

import copy

import torch
from peft import LoraConfig, get_peft_model

from tasks.lm.corpus import CHAR_VOCAB
from tasks.lm.model import TinyLMConfig, build_model
from tasks.lowrank.peft_lora import BalancingCallback, balance_lora_, lora_factor_pairs


MLP = ["mlp.c_fc", "mlp.c_proj"]  # the tiny GPT-2's MLP layers get the adapters


def peft_model(seed=0):
    base = build_model(TinyLMConfig(d_model=16, n_layers=1, n_heads=2, context=16), CHAR_VOCAB, seed=0)
    torch.manual_seed(seed)
    return get_peft_model(base, LoraConfig(r=3, lora_alpha=3, target_modules=MLP, fan_in_fan_out=True))


def test_zero_init_equals_base_and_is_not_balanced():
    model = peft_model()
    x = torch.randint(0, 90, (2, 16))
    with model.disable_adapter():
        base_logits = model(input_ids=x).logits
    assert torch.equal(model(input_ids=x).logits, base_logits)  # lora_B = 0: the base model
    before = [(l.clone(), r.clone()) for _, _, l, r in lora_factor_pairs(model)]
    assert balance_lora_(model) == 0  # zero products skipped (the LoRA-init saddle)
    assert all(torch.equal(l, b[0]) and torch.equal(r, b[1]) for (_, _, l, r), b in zip(lora_factor_pairs(model), before))


def test_balancing_keeps_outputs_and_balances_pairs():
    model = peft_model()
    with torch.no_grad():
        for _, _, left, _ in lora_factor_pairs(model):
            left.normal_(0, 0.5)
    x = torch.randint(0, 90, (2, 16))
    logits = model(input_ids=x).logits
    assert balance_lora_(model) == 2  # c_fc and c_proj of the one block
    assert torch.allclose(model(input_ids=x).logits, logits, atol=1e-5)
    for _, _, left, right in lora_factor_pairs(model):
        # the paper's A^T A = B B^T is lora_B^T lora_B = lora_A lora_A^T here
        assert torch.allclose(left.T @ left, right @ right.T, atol=1e-5)


def test_callback_balances_after_each_optimizer_step():
    model = peft_model()
    with torch.no_grad():
        for _, _, left, _ in lora_factor_pairs(model):
            left.normal_(0, 0.5)
    reference = copy.deepcopy(model)
    BalancingCallback().on_optimizer_step(None, None, None, model=model)
    balance_lora_(reference)
    for (_, _, l1, r1), (_, _, l2, r2) in zip(lora_factor_pairs(model), lora_factor_pairs(reference)):
        assert torch.equal(l1, l2) and torch.equal(r1, r2)
