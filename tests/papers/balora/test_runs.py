"""Testbed C's run is deterministic (same seed, same numbers); BaLoRA's pairs are balanced after every step while
LoRA's are not; the testbed A/B drivers on a tiny problem, and C1/C2 read their summaries."""
from __future__ import annotations

import copy

import pytest
import torch

from flows.balora.claims import c1, c2
from flows.balora.experiments import conditioning_runs, convergence_runs
from flows.balora.finetune import FinetuneSetting, finetune
from flows.balora.synthetic_data import synthetic_problem
from tasks.lm.corpus import CHAR_VOCAB
from tasks.lm.model import TinyLMConfig, build_model
from tasks.lowrank.balance import balancing_gap
from tasks.lowrank.peft_lora import lora_factor_pairs


@pytest.fixture(scope="module")
def base():
    return build_model(TinyLMConfig(d_model=16, n_layers=1, n_heads=2, context=16), CHAR_VOCAB, seed=0)


def run(base, method, seed=0):
    ids = torch.randint(0, 90, (400,), generator=torch.Generator().manual_seed(1))
    val = ids[:64].reshape(4, 16)
    return finetune(copy.deepcopy(base), ids, val, FinetuneSetting(method, 2, 1e-2, 1.0, 4, 4, 16, 2), seed)


def test_finetune_deterministic_and_balanced(base):
    first, again, lora = run(base, "balora"), run(base, "balora"), run(base, "lora")
    assert first["evals"] == again["evals"] and first["train_losses"] == again["train_losses"]
    assert [s for s, _ in first["evals"]] == [0, 2, 4] and first["evals"][0] == lora["evals"][0]
    gaps = {m: max(float(balancing_gap(l.detach(), r.detach()) / l.detach().square().sum())
                   for _, _, l, r in lora_factor_pairs(result["model"]))
            for m, result in (("balora", first), ("lora", lora))}
    assert gaps["balora"] < 1e-5 < gaps["lora"]


def test_testbeds_and_claims_on_a_tiny_problem():
    problem = synthetic_problem(8, 6, 2, 2, seed=0)
    rows = convergence_runs(problem, 5, {"sign": torch.tensor([0.01, 0.05])})
    assert len(rows) == 2 * 3 and all(len(r["excess"]) == 6 and r["excess"][-1] >= 0 for r in rows)
    again = convergence_runs(problem, 5, {"sign": torch.tensor([0.01, 0.05])})
    assert rows == again
    conditioning = conditioning_runs(problem, 50, 0.03, 0.999, 2)
    assert len(conditioning["rows"]) == 4 and conditioning["kappa_closed_form"] > 1
    balora = [r for r in conditioning["rows"] if r["method"] == "balora"]
    assert all(r["gap"] < 1e-10 * r["A_norm_sq"] for r in balora)
    from flows.balora.summaries import per_init_curves, summarize_conditioning, summarize_synthetic

    # the claims read the summaries of real runs: curves paired by init, condition numbers by init
    summary = {"A": summarize_synthetic(rows), "B": summarize_conditioning(conditioning), "c1_from_step": 3,
               "curves": per_init_curves(rows)}
    for claim in (c1(summary, True), c2(summary, True)):
        assert claim.verdict.word in ("pass", "fail", "inconclusive") and claim.verdict.interval.n == 2
