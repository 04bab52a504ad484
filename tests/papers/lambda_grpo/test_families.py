"""The task families: mod-m chain arithmetic (the spec's harder mod-7 family with long chains), the three disjoint
splits, the constant-answer baseline, the second family's params and their checks."""
from __future__ import annotations

import json

import numpy as np
import pytest
from pydantic import ValidationError

from flows.lambda_grpo.experiments import constant_answer, family_params, save_problems, sft_traces
from flows.lambda_grpo.params import Params
from tasks.core.params import load_paper_params
from tasks.lm import chain_arith as task
from tests.conftest import ROOT


def test_a_mod_7_chain_by_hand_and_its_noisy_teacher_stay_in_0_to_6():
    problem = task.ChainProblem(5, ("+", "*", "-"), (4, 3, 6), modulus=7)
    assert problem.chain() == [2, 6, 0] and problem.answer == 0  # 5+4=9=2, 2*3=6, 6-6=0 (mod 7)
    assert task.reward(problem, task.reference_completion(problem), 3) == 1.0
    rng = np.random.default_rng(0)
    problems = [task.sample_problem(rng, 8, 12, modulus=7) for _ in range(200)]
    assert all(8 <= p.k <= 12 and 0 <= p.x0 < 7 and max(p.digits) < 7 for p in problems)
    traces = [task.teacher_completion(p, 0.5, rng) for p in problems]
    assert all(max(c[:-3]) < 7 for c, _ in traces) and any(noisy for _, noisy in traces)
    assert task.ChainProblem.from_json(problem.to_json()) == problem
    assert task.ChainProblem.from_json({"x0": 1, "ops": "+", "digits": [2]}).modulus == 10  # files before the field
    with pytest.raises(ValueError, match="modulus"):
        task.sample_problem(rng, 2, 3, modulus=11)


def test_the_mod_10_family_draws_what_it_drew_before_the_modulus_existed():
    rng, old = np.random.default_rng(3), np.random.default_rng(3)
    problem = task.sample_problem(rng, 2, 6)
    k = int(old.integers(2, 7))
    x0, ops, digits = int(old.integers(10)), tuple(task.OPS[i] for i in old.integers(3, size=k)), old.integers(10, size=k)
    assert (problem.x0, problem.ops, problem.digits, problem.modulus) == (x0, ops, tuple(int(d) for d in digits), 10)


def smoke() -> Params:
    return load_paper_params(ROOT, "lambda_grpo", "smoke", Params)


def test_splits_are_disjoint_and_the_constant_answer_is_the_commonest_training_answer(tmp_path):
    params = family_params(smoke())
    assert params.task.modulus == 7 and params.second is None and params.sft.steps == smoke().second.sft_steps
    sizes = save_problems(params, tmp_path)
    sft_traces(params, tmp_path / "sft_traces.jsonl")
    rows = {name: {line for line in (tmp_path / f"{name}.jsonl").read_text().splitlines()} for name in ("val", "test", "tune")}
    assert [len(rows[n]) for n in ("val", "test", "tune")] == [sizes["val_size"], sizes["test_size"], sizes["tune_size"]]
    assert not rows["val"] & rows["test"] and not rows["tune"] & (rows["val"] | rows["test"])
    assert all(json.loads(line)["modulus"] == 7 for line in rows["tune"])
    baseline = constant_answer(tmp_path)
    answers = [task.ChainProblem.from_json(json.loads(line)).answer
               for line in (tmp_path / "sft_traces.jsonl").read_text().splitlines()]
    assert answers.count(baseline["answer"]) == max(answers.count(a) for a in range(7))
    val = [task.ChainProblem.from_json(json.loads(line)) for line in (tmp_path / "val.jsonl").read_text().splitlines()]
    assert baseline["val_rewards"] == [float(p.answer == baseline["answer"]) for p in val]


def test_each_family_needs_a_context_for_its_longest_chain():
    raw = smoke().model_dump()
    raw["second"]["task"]["k_max"] = 12  # 27 prompt + 15 completion tokens > context 32
    with pytest.raises(ValidationError, match="context of second.task"):
        Params(**raw)
