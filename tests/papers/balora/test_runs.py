"""Testbed C's run is deterministic (same seed, same numbers) and evaluates on its validation and test windows;
BaLoRA's pairs are balanced after every step while LoRA's are not; the svd variant's sign convention keeps the
factors' basis under AdamW where LAPACK's signs re-base it; the held-out splits are deterministic and disjoint;
C4's timing repeats; the testbed A/B drivers on a tiny problem, and C1/C2 read their summaries."""
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


def run(base, method, seed=0, steps=4, rank=2):
    ids = torch.randint(0, 90, (400,), generator=torch.Generator().manual_seed(1))
    val, test = ids[:64].reshape(4, 16), ids[64:128].reshape(4, 16)
    return finetune(copy.deepcopy(base), ids, val, FinetuneSetting(method, rank, 1e-2, 1.0, steps, 4, 16, 2), seed,
                    test)


def test_finetune_deterministic_and_balanced(base):
    first, again, lora = run(base, "balora"), run(base, "balora"), run(base, "lora")
    assert first["evals"] == again["evals"] and first["train_losses"] == again["train_losses"]
    assert first["test_evals"] == again["test_evals"] and first["test_evals"] != first["evals"]
    assert [s for s, _ in first["evals"]] == [0, 2, 4] and first["evals"][0] == lora["evals"][0]
    assert [s for s, _ in first["test_evals"]] == [0, 2, 4]
    assert lora["left_change_median"] is None and first["left_change_median"] >= 0
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


def test_the_sign_convention_keeps_the_basis_that_lapack_signs_rebase(base):
    """Under AdamW, the median relative change of the left factor per projection: LAPACK's signs (the authors'
    callback) flip columns at most projections (a flip of a column is a change of about 2 x its share of ||A||);
    the svd variant's agreeing signs change it by the factors' real motion only, like the aligned variant."""
    changes = {m: run(base, m, steps=20, rank=4)["left_change_median"]
               for m in ("balora_lapack", "balora", "balora_aligned")}
    assert changes["balora_lapack"] > 0.5, changes
    assert changes["balora"] < 0.25 and changes["balora_aligned"] < 0.25, changes
    assert changes["balora"] < changes["balora_lapack"] / 4, changes


def test_svd_variant_returns_a_balanced_pair_as_it_is():
    """Balancing a balanced pair changes nothing (exactly idempotent), while LAPACK's signs may flip columns; both
    have the same product and Gram matrices, in descending order."""
    from tasks.lowrank.balance import balance, balance_lapack_signs

    g = torch.Generator().manual_seed(3)
    A, B = torch.randn(12, 4, dtype=torch.float64, generator=g), torch.randn(4, 9, dtype=torch.float64, generator=g)
    A1, B1 = balance(A, B)
    for flipped in (A1 * torch.tensor([1.0, -1.0, 1.0, -1.0], dtype=torch.float64), A1):
        signs = torch.sign((flipped * A1).sum(0))
        A2, B2 = balance(flipped, signs[:, None] * B1)
        assert torch.allclose(A2, flipped, atol=1e-10)  # the current signs kept
    L1, M1 = balance_lapack_signs(A, B)
    assert torch.allclose(L1 @ M1, A1 @ B1, atol=1e-10) and torch.allclose(L1.T @ L1, A1.T @ A1, atol=1e-10)
    gram = torch.diagonal(A1.T @ A1)
    assert torch.all(gram[:-1] >= gram[1:])


def test_held_out_splits_are_deterministic_and_disjoint():
    from flows.balora.corpus import CORPORA, HELD_OUT_BUCKETS, _bucket, build_corpora, stdlib_files

    first, again = build_corpora(5000, 9000), build_corpora(5000, 9000)
    assert first == again and set(first) == set(CORPORA)
    assert all(len(first[name]) == 1000 for name in ("finetune_val", "finetune_test"))
    assert first["finetune_val"] != first["finetune_test"]
    # every file of half 2 lands in exactly one split, by the hash of its path alone
    names = [relative for relative, _ in stdlib_files()[:200]]
    kinds = {relative: HELD_OUT_BUCKETS.get(_bucket(relative, "val", 10), "finetune_train") for relative in names}
    assert {"finetune_val", "finetune_test", "finetune_train"} <= set(kinds.values())


def test_timing_repeats_time_every_variant_with_its_projection_share(base):
    from flows.balora.params import TimingParams
    from flows.balora.timing import timing_repeats

    setting = TimingParams(model={"d_model": 16, "n_layers": 1, "n_heads": 2, "context": 16}, batch=2, steps=2,
                           repeats=2)
    ids = torch.randint(0, 90, (400,), generator=torch.Generator().manual_seed(1))
    runs = timing_repeats(base, ids, 2, setting, [0, 1], ("lora", "balora", "balora_aligned"))
    assert [r["seed"] for r in runs] == [0, 1] and all("models" not in r for r in runs)
    for r in runs:
        assert set(r["ratios"]) == set(r["projection_share"]) == {"balora", "balora_aligned"}
        assert r["ratio"] == r["ratios"]["balora"] > 0
        assert all(0 < share < 1 for share in r["projection_share"].values())
