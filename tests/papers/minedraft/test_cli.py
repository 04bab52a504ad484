"""`papers minedraft generate`: hostile input refused in one line with exit 2 (before torch loads); a real run."""
from __future__ import annotations

import json
import subprocess

import pytest

from tasks.lm.corpus import CHAR_VOCAB
from tasks.lm.model import TinyLMConfig, build_model, save_model


def papers(*args):
    return subprocess.run(["papers", "minedraft", "generate", *args], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    folder = tmp_path_factory.mktemp("minedraft_cli")
    for name, config, seed in (("target", TinyLMConfig(d_model=32, n_layers=1, n_heads=2, context=48), 1),
                              ("drafter", TinyLMConfig(d_model=16, n_layers=1, n_heads=2, context=48), 2)):
        save_model(build_model(config, CHAR_VOCAB, seed), folder / name, CHAR_VOCAB, config)
    (folder / "prompts.jsonl").write_text('"def f(x):"\n{"text": "import os"}\n')
    return folder


@pytest.mark.parametrize("args, message", [
    (["--k", "0"], "--k: must be in 1..32, got 0"),
    (["--method", "beam"], "--method: must be one of ar, sd, psd"),
    (["--temperature", "inf"], "--temperature: must be a finite number"),
    (["--max-new", "100"], "exceeds the models' context of 48"),
    (["--batch", "1"], "--batch: must be in 2..1,024"),
    (["--seed", "-1"], "--seed: must be >= 0"),
])
def test_hostile_options(folders, args, message):
    result = papers("--target", str(folders / "target"), "--drafter", str(folders / "drafter"),
                    "--prompts", str(folders / "prompts.jsonl"), *args)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_hostile_files(folders, tmp_path):
    bad = tmp_path / "bad.jsonl"
    for text, message in (("[1, 2]\n", "expected a non-empty JSON string"), ("nope\n", "not JSON"),
                          ('"caf\u00e9"\n', "not in the models' vocabulary"), ("\n", "no prompts")):
        bad.write_text(text)
        result = papers("--target", str(folders / "target"), "--drafter", str(folders / "drafter"), "--prompts", str(bad))
        assert result.returncode == 2 and message in result.stderr, result.stderr
    result = papers("--target", str(tmp_path), "--drafter", str(folders / "drafter"),
                    "--prompts", str(folders / "prompts.jsonl"))
    assert result.returncode == 2 and "tiny_lm.json" in result.stderr
    result = papers("--target", str(folders / "target"), "--prompts", str(folders / "prompts.jsonl"), "--method", "sd")
    assert result.returncode == 2 and "--drafter: needed by --method sd" in result.stderr


@pytest.mark.slow  # two worker processes importing torch and transformers
def test_psd_run_prints_json(folders):
    result = papers("--target", str(folders / "target"), "--drafter", str(folders / "drafter"),
                    "--prompts", str(folders / "prompts.jsonl"), "--k", "2", "--max-new", "6", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["method"] == "psd" and report["tokens"] == 12 and len(report["completions"]) == 2
    assert report["throughput"] > 0 and report["load_average"] >= 0
