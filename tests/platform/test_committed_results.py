"""The default profile's results are committed with the code that made them: every paper's evaluate
outputs live in git (DVC `cache: false`), agree with the committed dvc.lock, stay within their size
budget, and every README shows exactly the claims.json it quotes."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from stages.readme import results_block, stale_readmes, with_block
from stages.report import claims_paths
from stages.spec import papers
from tasks.core.claims import claims_markdown, read_claims
from tasks.core.io import path_md5
from tests.conftest import ROOT

RESULTS_BUDGET_BYTES = 2_000_000  # per paper: claims, headline metrics, tables and plots


def committed_outputs(paper: str) -> list[str]:
    evaluate = yaml.safe_load((ROOT / "stages" / paper / "dvc.yaml").read_text())["stages"][f"{paper}-evaluate"]
    entries = [entry for kind in ("outs", "metrics", "plots") for entry in evaluate.get(kind, [])]
    assert all(isinstance(e, dict) and next(iter(e.values())).get("cache") is False for e in entries), \
        f"{paper}-evaluate: every output must be committed to git (`cache: false`)"
    return [next(iter(e)) for e in entries]


def git_files(path: str) -> list[str]:
    return subprocess.run(["git", "ls-files", path], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()


@pytest.mark.parametrize("paper", papers(ROOT))
def test_evaluate_outputs_are_in_git_agree_with_the_lock_and_fit_the_budget(paper):
    lock = yaml.safe_load((ROOT / "stages" / paper / "dvc.lock").read_text())["stages"][f"{paper}-evaluate"]
    locked = {out["path"]: out["md5"] for out in lock["outs"]}
    size = 0
    for output in committed_outputs(paper):
        files = git_files(output)
        assert files, f"{output} is not committed"
        assert locked.get(output) == path_md5(ROOT / output), f"{output} is not the output dvc.lock records"
        size += sum((ROOT / f).stat().st_size for f in files)
    assert size <= RESULTS_BUDGET_BYTES, f"{paper}'s committed results take {size} bytes"
    claims = json.loads((ROOT / "data" / paper / "claims.json").read_text())
    assert claims["profile"] == yaml.safe_load((ROOT / "params.yaml").read_text())["profile"]


def test_every_readme_shows_its_committed_claims():
    assert stale_readmes(ROOT) == []


def test_a_readme_number_that_disagrees_with_its_claims_is_caught(tmp_path):
    paper = papers(ROOT)[0]
    document = json.loads((ROOT / "data" / paper / "claims.json").read_text())
    readme = with_block("# x\n\n## What we measured\n\nprose\n", paper, results_block(document))
    assert results_block(document) in readme and readme.endswith("prose\n")
    document["claims"][0]["ours"] = (document["claims"][0]["ours"] or 0) + 1.0
    assert results_block(document) not in readme
    assert with_block(readme, paper, results_block(document)).count("<!-- results:") == 1


def test_the_committed_report_is_the_committed_claims():
    assert git_files("reports/claims.md")
    assert (ROOT / "reports" / "claims.md").read_text() == claims_markdown(read_claims(claims_paths(ROOT)))


def test_dvc_plots_show_renders_every_committed_plot_offline(tmp_path):
    done = subprocess.run([sys.executable, "-m", "dvc", "plots", "show", "-o", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "index.html").read_text()
    assert "http" not in page and "<script" not in page  # nothing to fetch
    committed = [f for f in git_files("data") if f.endswith(".png")]
    assert committed and page.count("<img") == len(committed)
