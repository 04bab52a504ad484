"""`papers lambda-grpo weights | train` on good and hostile input: one line naming the culprit, exit 2."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from flows.lambda_grpo.cli import group_report, read_group
from tests.cli_table import Row, check_rows, run_rows


def write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


def test_weights_report(tmp_path):
    path = write(tmp_path / "g.jsonl", '[1, 2, 3]\n{"tokens": [1, 2, 4]}\n\n{"text": "ab"}\n')
    report = group_report(*read_group(Path(path)))
    assert report["lambda"] == [[2, 2, 1], [2, 2, 1], [1, 1]] and report["weights"][0] == [0.5, 0.5, 1.0]
    assert {"members": [0, 1], "start": 0, "end": 2} in report["process_steps"] and "advantages" not in report
    rewarded = group_report(*read_group(Path(write(tmp_path / "r.jsonl", '{"tokens": [1], "reward": 1}\n'
                                                                             '{"tokens": [1], "reward": 0}\n'))))
    assert rewarded["process_steps"] == [{"members": [0, 1], "start": 0, "end": 1, "mc_value": 0.5,
                                          "mc_advantage": 0.0}]


@pytest.mark.heavy  # a table of 19 rows in a child process: ~7 s (test_weights_report stays)
def test_entry_point_rows(tmp_path):
    f = lambda name, text: write(tmp_path / name, text)  # noqa: E731
    good = f("good.jsonl", '{"tokens": [1, 2], "reward": 1}\n{"tokens": [1, 3], "reward": 0}\n')
    w = ("lambda-grpo", "weights")
    check_rows([
        Row((*w, "--help"), code=0),
        Row((*w, good, "--json"), code=0),
        Row((*w, good), code=0),
        Row((*w, f("one.jsonl", "[1]\n")), code=2, names=("one.jsonl", "at least 2")),
        Row((*w, f("nan.jsonl", '{"tokens": [1], "reward": NaN}\n[1]\n')), code=2, names=("line 1", "finite")),
        Row((*w, f("neg.jsonl", "[1, -2]\n[1]\n")), code=2, names=("line 1", "non-negative")),
        Row((*w, f("junk.jsonl", "[1]\nnot json\n")), code=2, names=("line 2", "not JSON")),
        Row((*w, f("keys.jsonl", '{"tokens": [1], "text": "a"}\n[1]\n')), code=2, names=("line 1", "exactly one")),
        Row((*w, f("mix.jsonl", '{"tokens": [1], "reward": 1}\n[1]\n')), code=2, names=("every line",)),
        Row((*w, f("long.jsonl", json.dumps(list(range(70_000))) + "\n[1]\n")), code=2, names=("line 1", "65,536")),
        Row((*w, str(tmp_path / "missing.jsonl")), code=2, names=("missing.jsonl", "no such file")),
        Row(("lambda-grpo", "train", "--task", "gsm8k"), code=2, names=("--task", "gsm8k")),
        Row(("lambda-grpo", "train", "--method", "ppo"), code=2, names=("--method", "ppo")),
        Row(("lambda-grpo", "train", "--rl-steps", "0"), code=2, names=("--rl-steps",)),
        Row(("lambda-grpo", "train", "--sft-steps", "1000000"), code=2, names=("--sft-steps", "100,000")),
        Row(("lambda-grpo", "train", "--profile", "huge"), code=2, names=("--profile", "huge")),
        Row(("lambda-grpo", "train", "--lr", "0"), code=2, names=("--lr", "0")),
        Row(("lambda-grpo", "train", "--lr", "nan"), code=2, names=("--lr", "nan")),
        Row(("lambda-grpo", "train", "--lr", "2.5"), code=2, names=("--lr", "2.5", "(0, 1]")),
    ])


@pytest.mark.slow  # a child process that imports torch and transformers, trains and RL-tunes
def test_train_runs_both_methods_from_one_sft_policy():
    (done,) = run_rows([Row(("lambda-grpo", "train", "--sft-steps", "5", "--rl-steps", "2", "--lr", "0.002", "--json"),
                            code=0)])
    assert done.code == 0, done.stderr
    result = json.loads(done.stdout)
    assert set(result["methods"]) == {"grpo", "lambda_grpo"} and result["parameters"] > 0 and result["lr"] == 0.002
    assert all(0 <= row["test"] <= 1 for row in result["methods"].values())
