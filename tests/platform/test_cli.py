"""The `papers` command as a user meets it, in a throwaway copy of the project."""
import subprocess
import sys

import pytest

from stages.declarations import paper_commands
from tests.conftest import ROOT, papers, papers_by_size, stage_env

PAPER, DECLARED = next(iter(papers_by_size().items()))
STAGES = [stage.name for stage in DECLARED.stages]


def test_list_shows_papers_and_stages_before_any_run(repo_copy):
    (repo_copy / "data" / PAPER / "claims.json").unlink()  # as if its results were not committed
    done = papers(repo_copy, "list")
    assert done.returncode == 0, done.stderr
    assert PAPER in done.stdout and " -> ".join(STAGES) in done.stdout and "not run" in done.stdout


def test_report_shows_the_committed_results_and_without_any_says_what_to_do(repo_copy):
    done = papers(repo_copy, "report")
    assert done.returncode == 0 and PAPER in done.stdout and "C1" in done.stdout, done.stdout
    for claims in repo_copy.glob("data/*/claims.json"):
        claims.unlink()
    done = papers(repo_copy, "report")
    assert done.returncode == 0 and "papers run" in done.stdout


def test_run_refuses_unknown_paper_and_profile_before_doing_anything(repo_copy):
    unknown = papers(repo_copy, "run", "nope")
    assert unknown.returncode == 2 and "unknown paper 'nope'" in unknown.stderr
    bad_profile = papers(repo_copy, "run", PAPER, "--profile", "huge")
    assert bad_profile.returncode == 2 and "huge" in bad_profile.stderr
    assert "profile: smoke" in (repo_copy / "params.yaml").read_text()
    assert not (repo_copy / "data" / PAPER / DECLARED.stages[0].outputs[0]).exists()


def test_stage_entry_names_unknown_stage(repo_copy):
    done = subprocess.run([sys.executable, "-m", "stages", PAPER, "nope"], cwd=repo_copy, env=stage_env(repo_copy),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and f"unknown stage 'nope' of {PAPER} (stages: {', '.join(STAGES)})" in done.stderr


def command_paths() -> list[tuple[str, ...]]:
    """Every command and group of `papers`, as argv prefixes (the root first)."""
    import typer.main

    from stages.cli import app

    paths = []

    def walk(command, prefix):
        paths.append(prefix)
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, (*prefix, name))

    walk(typer.main.get_command(app), ())
    return paths


def test_help_of_every_command_prints_and_exits_0():
    from tests.cli_table import Row, check_rows

    paths = command_paths()
    assert ("server", "start") in paths
    assert all(any(path[:1] == (command.name,) and len(path) > 1 for path in paths) for command in paper_commands(ROOT))
    # `papers prefect` hands its process over to the prefect CLI (exec), so its help runs in a process of its own.
    check_rows([Row((*path, "--help"), code=0) for path in paths if path != ("prefect",)])
    done = papers(ROOT, "prefect", "--help")
    assert done.returncode == 0 and "Usage: prefect" in done.stdout, done.stdout + done.stderr


def test_commands_work_from_outside_the_checkout(tmp_path):
    from tests.cli_table import Row, check_rows

    check_rows([Row(("list",), code=0), Row(("report",), code=0)], cwd=tmp_path)


HEAVY = ("torch", "mlflow", "pyscipopt", "prefect")
_IMPORTS_CHILD = r"""
import json, sys
sys.argv = ["papers", *sys.argv[1:]]
from stages.cli import main
try:
    main()
except SystemExit:
    pass
sys.stderr.write(json.dumps(sorted({name.partition(".")[0] for name in sys.modules})))
"""


@pytest.mark.heavy  # a child process per paper command: ~6 s
def test_help_list_and_report_do_not_import_torch_mlflow_scip_or_prefect():
    """What makes `papers --help` and each paper's `--help` start at once: the paper sub-apps are imported
    only when they run, and import the heavy libraries inside their commands (timing: benchmarks/cli_startup.py).
    A paper command's `--help` imports its module, as its commands do."""
    import json

    for args in (("--help",), *((command.name, "--help") for command in paper_commands(ROOT)), ("list",), ("report",)):
        done = subprocess.run([sys.executable, "-c", _IMPORTS_CHILD, *args], cwd=ROOT, env=stage_env(ROOT),
                              capture_output=True, text=True, timeout=120)
        assert "Usage:" in done.stdout or args[0] in ("list", "report"), done.stdout + done.stderr
        imported = set(json.loads(done.stderr.splitlines()[-1]))
        assert not imported & set(HEAVY), f"papers {' '.join(args)} imports {sorted(imported & set(HEAVY))}"


def test_paper_sub_apps_are_listed_as_their_modules_describe_them():
    from stages.cli import PaperApp

    for name, source, summary, _ in paper_commands(ROOT):
        listed = PaperApp(name, source, summary)
        assert listed.group.help == summary, f"{name}: the declared summary differs from {source}'s help"
        assert listed.group.name == name and listed.commands
