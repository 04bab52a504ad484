"""The default profile's results are committed with the code that made them: every paper's evaluate
outputs live in git (DVC `cache: false`), agree with the committed dvc.lock, stay within their size
budget, name a commit of this history made with a clean tree, and every README shows exactly the claims.json
it quotes. The default models a fresh clone's commands use are committed beside them, within their budget."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from stages.claims_page import claims_page
from stages.prose_numbers import CITED_BENCHMARK, unheld_numbers
from stages.readme import results_block, stale_readmes, with_block
from stages.report import claims_paths
from stages.spec import papers
from tasks.core.claims import claims_markdown, read_claims
from tasks.core.default_models import BUDGET_BYTES as DEFAULT_MODELS_BUDGET
from tasks.core.default_models import FOLDER as DEFAULT_MODELS
from tasks.core.default_models import committed_default
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
    locked = locked_outputs(paper)
    size = 0
    for output in committed_outputs(paper):
        files = git_files(output)
        assert files, f"{output} is not committed"
        assert locked.get(output) == path_md5(ROOT / output), f"{output} is not the output dvc.lock records"
        size += sum((ROOT / f).stat().st_size for f in files)
    assert size <= RESULTS_BUDGET_BYTES, f"{paper}'s committed results take {size} bytes"
    claims = json.loads((ROOT / "data" / paper / "claims.json").read_text())
    assert claims["profile"] == yaml.safe_load((ROOT / "params.yaml").read_text())["profile"]


def git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)


def untraceable(commit: str, dirty: bool) -> str | None:
    """Why a result stamped (commit, dirty) is not traceable to this history, None when it is."""
    if dirty:
        return f"made in a dirty tree (commit {commit[:10]})"
    if git("cat-file", "-e", f"{commit}^{{commit}}").returncode != 0:
        return f"names commit {commit[:10]}, which this repository does not have (a rebased branch?)"
    if git("merge-base", "--is-ancestor", commit, "HEAD").returncode != 0:
        return f"names commit {commit[:10]}, which is not in this branch's history"
    return None


@pytest.mark.parametrize("paper", papers(ROOT))
def test_committed_results_name_a_commit_of_this_history_with_a_clean_tree(paper):
    assert git("rev-parse", "--is-shallow-repository").stdout.strip() == "false", "needs the full git history"
    claims = json.loads((ROOT / "data" / paper / "claims.json").read_text())
    why = untraceable(claims["commit"], bool(claims.get("git_dirty")))
    assert why is None, f"data/{paper}/claims.json: {why}; rerun it on main (`papers run {paper}`) and commit"
    for provenance in sorted((ROOT / "data" / paper / DEFAULT_MODELS).glob("*.json")):
        stamp = json.loads(provenance.read_text())
        why = untraceable(stamp["commit"], stamp["git_dirty"])
        assert why is None, f"{provenance.relative_to(ROOT)}: {why}"
        # Made by the committed run, or by an earlier one whose stage DVC kept because its inputs did not change:
        # either way the committed lock records these very files.
        made_before = git("merge-base", "--is-ancestor", stamp["commit"], claims["commit"]).returncode == 0
        assert made_before, f"{provenance.relative_to(ROOT)}: made at {stamp['commit'][:10]}, after the run it ships with"
    if any((ROOT / "data" / paper / DEFAULT_MODELS).glob("*.json")):
        folder = f"data/{paper}/{DEFAULT_MODELS}"
        assert locked_outputs(paper).get(folder) == path_md5(ROOT / folder), \
            f"{folder}: not what stages/{paper}/dvc.lock records"


def locked_outputs(paper: str) -> dict[str, str]:
    """Output path -> the md5 the paper's committed dvc.lock records for it (a folder's ends in .dir)."""
    lock = yaml.safe_load((ROOT / "stages" / paper / "dvc.lock").read_text())
    return {out["path"]: out["md5"] for stage in lock["stages"].values() for out in stage.get("outs", [])}


@pytest.mark.parametrize("paper", papers(ROOT))
def test_default_models_are_committed_resolvable_and_within_budget(paper):
    folder = ROOT / "data" / paper / DEFAULT_MODELS
    stamps = sorted(folder.glob("*.json"))
    size = 0
    for stamp in stamps:
        name = stamp.stem
        model = committed_default(ROOT, name)
        assert model is not None, f"{stamp.relative_to(ROOT)}: its model is missing or does not match its md5"
        assert git_files(str(model.path.relative_to(ROOT))), f"{model.path} is not committed"
        size += model.path.stat().st_size + stamp.stat().st_size
    assert size <= DEFAULT_MODELS_BUDGET, f"{paper}'s default models take {size:,} bytes (budget {DEFAULT_MODELS_BUDGET:,})"


@pytest.mark.parametrize("paper", papers(ROOT))
def test_readme_findings_quote_only_numbers_that_committed_files_hold(paper):
    assert unheld_numbers(ROOT, paper) == []


def test_a_stale_number_in_the_findings_is_caught(tmp_path):
    paper = "p"
    (tmp_path / "data" / paper).mkdir(parents=True)
    (tmp_path / "stages" / paper).mkdir(parents=True)
    (tmp_path / "data" / paper / "claims.json").write_text(json.dumps(
        {"claims": [{"id": "C1", "ours": 0.21320, "paper_value": "ratio 0.5", "details": {"robust": 0.4412}}]}))
    (tmp_path / "stages" / paper / "params.yaml").write_text("p:\n  base:\n    lr: 3.0e-3\n")
    (tmp_path / "stages" / paper / "README.md").write_text(
        "## What the paper claims\n\nQwen's best lr 7.7e-6.\n\n## What we found (default profile)\n\n"
        "Ratio 0.21 (the paper: 0.5, lr 7.7e-6), ours at lr 3e-3; 44% robust; 80 steps. Ratio 1.115 before.\n"
        "<!-- results: generated from data/p/claims.json -->\n| 9.99 |\n<!-- end of results -->\n")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "add", "."], cwd=tmp_path, check=True)
    assert unheld_numbers(tmp_path, paper) == ["What we found (default profile): 1.115"]


def test_cited_benchmark_results_are_committed_and_made_on_this_history():
    documents = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted(ROOT.glob("stages/*/README.md"))]
    problems = []
    for document in documents:
        for cited in sorted(set(CITED_BENCHMARK.findall(document.read_text()))):
            if not git_files(cited):
                problems.append(f"{document.relative_to(ROOT)} cites {cited}, which git does not keep")
                continue
            result = json.loads((ROOT / cited).read_text())
            why = untraceable(result["commit"], bool(result["dirty"]))
            if why:
                problems.append(f"{cited}: {why}")
    assert problems == []


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
    assert git_files("reports/claims.md") and git_files("reports/index.html")
    assert (ROOT / "reports" / "claims.md").read_text() == claims_markdown(read_claims(claims_paths(ROOT)))
    assert (ROOT / "reports" / "index.html").read_text(encoding="utf-8") == claims_page(ROOT)


def test_dvc_plots_show_renders_every_committed_plot_offline(tmp_path):
    done = subprocess.run([sys.executable, "-m", "dvc", "plots", "show", "-o", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "index.html").read_text()
    assert "http" not in page and "<script" not in page  # nothing to fetch
    committed = [f for f in git_files("data") if f.endswith(".png")]
    assert committed and page.count("<img") == len(committed)
