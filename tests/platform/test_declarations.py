"""A paper declares itself once (flows/<paper>/paper.py); the shared files are derived from the declarations, and a
new paper is picked up by the generator, `papers`, the benchmarks and the report with no shared file edited."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from benchmarks.__main__ import has_main
from flows.declaration import Paper, Stage
from stages.declarations import DeclarationError, check_stages, command_name, declarations, paper_commands
from stages.generate import README_BEGIN, stale
from stages.spec import papers
from tasks.core.claims import status_word
from tasks.core.provenance import copy_project
from tests.conftest import ROOT, stage_env


def template() -> tuple[str, str]:
    """(paper, benchmark suffix) of the first paper with a command and a benchmark `benchmarks/<paper><suffix>.py` of
    its own: the one a new paper is copied from."""
    for paper, declared in declarations(ROOT).items():
        benchmarks = [path for path in sorted((ROOT / "benchmarks").glob(f"{paper}_*.py")) if has_main(path)]
        if declared.command is not None and benchmarks:
            return paper, benchmarks[0].stem.removeprefix(paper)
    raise AssertionError("no paper has a command and a benchmark of its own to copy")


TEMPLATE, BENCHMARK = template()
COMMAND = command_name(TEMPLATE)
SLUG = f"{TEMPLATE}_copy"


def test_the_derived_files_agree_with_the_declarations():
    assert stale(ROOT) == []


def test_every_paper_with_stages_declares_itself():
    assert list(declarations(ROOT)) == papers(ROOT)
    for paper, declared in declarations(ROOT).items():
        assert declared.title and declared.pipeline and len(declared.nightly.split()) == 5, paper


def python(repo: Path, *args: str) -> subprocess.CompletedProcess:
    """`python ARGS` in `repo`, importing the copy's own packages (the working folder comes first on sys.path)."""
    return subprocess.run([sys.executable, *args], cwd=repo, env=stage_env(repo), capture_output=True, text=True,
                          timeout=300)


def add_paper(repo: Path, template: str, slug: str) -> None:
    """A new paper `slug`: the template's package, params and README, benchmark and committed claims under the new
    name, its command `slug` with hyphens in place of the template's (its dvc.yaml is the generator's to write)."""
    for folder in (Path("flows"), Path("stages"), Path("data")):
        shutil.copytree(repo / folder / template, repo / folder / slug,
                        ignore=shutil.ignore_patterns("dvc.yaml", "dvc.lock", "plots"))
    shutil.copy(repo / "benchmarks" / f"{template}{BENCHMARK}.py", repo / "benchmarks" / f"{slug}{BENCHMARK}.py")
    for path in [*(repo / "flows" / slug).glob("*.py"), *(repo / "stages" / slug).glob("*.*"), repo / "data" / slug / "claims.json",
                 repo / "benchmarks" / f"{slug}{BENCHMARK}.py"]:
        path.write_text(path.read_text().replace(template, slug))


@pytest.mark.heavy  # copies the project and regenerates its derived files: ~7 s
def test_a_new_paper_is_picked_up_with_no_shared_file_edited(tmp_path):
    from stages.cli import PaperApp

    repo = copy_project(ROOT, tmp_path / "repo")
    add_paper(repo, TEMPLATE, SLUG)
    generated = python(repo, "-m", "stages.generate")
    assert generated.returncode == 0, generated.stderr
    changed = subprocess.run(["git", "diff", "--name-only"], cwd=repo, capture_output=True, text=True, check=True).stdout.split()
    assert sorted(changed) == ["README.md", "dvc.yaml", "prefect.yaml"]  # derived, never hand-edited
    assert python(repo, "-m", "stages.generate", "--check").returncode == 0
    template_yaml = (repo / "stages" / TEMPLATE / "dvc.yaml").read_text()
    assert (repo / "stages" / SLUG / "dvc.yaml").read_text() == template_yaml.replace(TEMPLATE, SLUG)

    assert f"data/{SLUG}/claims.json" in yaml.safe_load((repo / "dvc.yaml").read_text())["stages"]["report"]["deps"]
    deployments = {d["name"]: d for d in yaml.safe_load((repo / "prefect.yaml").read_text())["deployments"]}
    assert {f"{SLUG}-pipeline", f"{SLUG}-pipeline-image", f"{SLUG}-pipeline-docker"} <= set(deployments)
    assert deployments[f"{SLUG}-pipeline"]["parameters"]["paper"] == SLUG
    assert f"| [{SLUG}](stages/{SLUG}/README.md) |" in (repo / "README.md").read_text()

    listed = python(repo, "-c", f"import sys; sys.argv = ['papers', '{SLUG.replace('_', '-')}', '--help']; "
                                "from stages.cli import main; main()")
    [template_app] = [PaperApp(c.name, c.source, c.summary) for c in paper_commands(ROOT) if c.name == COMMAND]
    assert listed.returncode == 0 and all(name in listed.stdout for name in template_app.commands), listed.stdout + listed.stderr
    benchmarks = python(repo, "-c", "from benchmarks.__main__ import benchmark_modules; print(benchmark_modules())")
    assert f"'{SLUG}{BENCHMARK}'" in benchmarks.stdout, benchmarks.stderr
    reported = python(repo, "-m", "stages", "report")
    assert reported.returncode == 0, reported.stderr
    assert f"| {SLUG} |" in (repo / "reports" / "claims.md").read_text()


def test_a_paper_missing_its_declaration_or_its_params_is_named(tmp_path):
    repo = copy_project(ROOT, tmp_path / "repo")
    add_paper(repo, TEMPLATE, SLUG)
    (repo / "flows" / SLUG / "paper.py").unlink()
    done = python(repo, "-m", "stages.generate", "--check")
    assert done.returncode == 2 and f"missing: flows/{SLUG}/paper.py" in done.stderr, done.stderr
    twin = f"{TEMPLATE}_twin"
    add_paper(repo, TEMPLATE, twin)
    (repo / "stages" / twin / "params.yaml").unlink()
    shutil.rmtree(repo / "stages" / SLUG)
    done = python(repo, "-m", "stages.generate", "--check")
    assert done.returncode == 2 and f"missing: stages/{twin}/params.yaml" in done.stderr, done.stderr


@pytest.mark.parametrize(("stages", "message"), [
    ((), "stages must be a non-empty tuple"),
    ((Stage("solve", inputs=("problems",)),), "stage 'solve' reads 'problems', which no earlier stage writes"),
    ((Stage("generate", outputs=("a",)), Stage("generate", outputs=("b",))), "stage 'generate' is declared twice"),
    ((Stage("generate", outputs=("a",)), Stage("solve", committed=("a",))), "'a' is written by both 'generate' and 'solve'"),
    ((Stage("generate", outputs=("../escape",)),), "must be a relative path under data/p/"),
    ((Stage("make-data"),), "stage name 'make-data' must be an identifier"),
])
def test_a_stage_graph_that_cannot_run_is_named(stages, message):
    declared = Paper("t", "p", "0 0 * * *", stages)
    with pytest.raises(DeclarationError, match=re.escape(message)):
        check_stages(ROOT, "p", declared)


def test_a_stage_that_claims_returns_claims_and_the_runner_writes_them():
    """The generated dvc.yaml lists claims.json (committed) and metrics.json (a metric) for a claims stage."""
    for paper, declared in declarations(ROOT).items():
        stage = next(s for s in declared.stages if s.claims)
        body = yaml.safe_load((ROOT / "stages" / paper / "dvc.yaml").read_text())["stages"][f"{paper}-{stage.name}"]
        assert {f"data/{paper}/claims.json": {"cache": False}} in body["outs"]
        assert body["metrics"] == [{f"data/{paper}/metrics.json": {"cache": False}}]


def test_the_readme_table_counts_the_committed_verdicts():
    text = (ROOT / "README.md").read_text()
    assert README_BEGIN in text
    for paper in papers(ROOT):
        words = [status_word(c) for c in json.loads((ROOT / "data" / paper / "claims.json").read_text())["claims"]]
        counts = [(words.count(word), word) for word in ("pass", "FAIL", "inconclusive", "undecided", "report")]
        row = next(line for line in text.splitlines() if line.startswith(f"| [{paper}]("))
        assert row.endswith(" | " + ", ".join(f"{n} {word}" for n, word in counts if n) + " |"), row


def test_each_papers_command_is_its_slug_and_points_at_its_cli():
    for command in paper_commands(ROOT):
        assert command.name == command.paper.replace("_", "-")
        assert (ROOT / "flows" / command.paper / "cli.py").exists(), command


def test_an_undeclared_paper_object_is_refused(monkeypatch):
    from stages import declarations as module

    monkeypatch.setattr(module.importlib, "import_module", lambda name: type("M", (), {"PAPER": {"title": "x"}}))
    with pytest.raises(DeclarationError, match=r"flows/p/paper.py: PAPER must be a flows.declaration.Paper"):
        module.declaration("p")
