"""`papers balora finetune` on good and hostile input: one line naming the culprit, exit 2; the adapter written with
peft's save_pretrained and loadable by peft."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_table import Row, check_rows, run_rows


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    from tasks.lm.corpus import CHAR_VOCAB
    from tasks.lm.model import TinyLMConfig, build_model, save_model

    folder = tmp_path_factory.mktemp("model") / "base"
    config = TinyLMConfig(d_model=16, n_layers=1, n_heads=2, context=16)
    return save_model(build_model(config, CHAR_VOCAB, seed=0), folder, CHAR_VOCAB, config)


def write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


@pytest.mark.heavy  # a child process that imports torch and peft and fine-tunes: ~8 s
def test_entry_point(tmp_path, tiny_model):
    f = lambda name, text: write(tmp_path / name, text)  # noqa: E731
    good = f("good.jsonl", "".join(json.dumps({"text": f"Return the value {i} of the mapping."}) + "\n" for i in range(20)))
    model = ("balora", "finetune", "--model", str(tiny_model))
    (done,) = run_rows([Row((*model, "--data", good, "--rank", "2", "--steps", "3", "--out", str(tmp_path / "ad"),
                             "--json"), code=0)])
    assert done.code == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["method"] == "balora" and len(result["evals"]) == 4 and result["final_eval"] > 0
    assert (tmp_path / "ad" / "adapter_model.safetensors").exists()
    config = json.loads((tmp_path / "ad" / "adapter_config.json").read_text())
    assert config["r"] == 2 and config["peft_type"] == "LORA"
    check_rows([
        Row(("balora", "finetune", "--help"), code=0),
        Row((*model, "--data", good, "--rank", "0"), names=("--rank", "got 0")),
        Row((*model, "--data", good, "--rank", "17"), names=("--rank", "1..16")),
        Row((*model, "--data", good, "--rank", "2", "--method", "dora"), names=("--method", "dora")),
        Row((*model, "--data", good, "--rank", "2", "--lr", "nan"), names=("--lr", "finite")),
        Row((*model, "--data", good, "--rank", "2", "--scale", "-1"), names=("--scale",)),
        Row((*model, "--data", good, "--rank", "2", "--steps", "0"), names=("--steps",)),
        Row((*model, "--data", good, "--rank", "2", "--out", str(tmp_path / "ad")), names=("--out", "not an empty")),
        Row((*model, "--data", str(tmp_path / "missing.jsonl"), "--rank", "2"), names=("missing.jsonl", "no such file")),
        Row((*model, "--data", f("junk.jsonl", "{\"text\": \"a\"}\nnot json\n"), "--rank", "2"), names=("line 2", "JSON")),
        Row((*model, "--data", f("keys.jsonl", "{\"txt\": \"a\"}\n"), "--rank", "2"), names=("line 1", "'text'")),
        Row((*model, "--data", f("short.txt", "abc"), "--rank", "2"), names=("short.txt", "too short")),
        Row((*model, "--data", f("bin.txt", "a\0b"), "--rank", "2"), names=("bin.txt", "binary")),
        Row(("balora", "finetune", "--model", str(tmp_path), "--data", good, "--rank", "2"), names=("tiny_lm.json",)),
        Row(("balora", "finetune", "--model", good, "--data", good, "--rank", "2"), names=("--model", "not a folder")),
    ])
