"""Entry points, round 2 (issue 37): each bad input below ends with one line naming it and the fix, exit 2, no
traceback, at once. The `papers` rows run as a user meets them (tests/cli_table.py); a bad environment variable
stops `papers` before its commands load, so those rows run the command itself; a stage's broken array input and
an MLflow store that cannot record its run are the stage runner's, called here with the stage's flow stubbed."""
from __future__ import annotations

import json
import shutil
import subprocess
import zipfile
from types import SimpleNamespace

import numpy as np
import pytest
import yaml

from tests.cli_table import bad, check_rows
from tests.conftest import BIN, ROOT, papers_by_size, stage_env

pytestmark = pytest.mark.heavy  # child processes that start `papers`: ~15-25 s in all on 2 busy cores

# -------------------------------------------------------------------------------------------- PAPERS_* settings


@pytest.mark.parametrize("variable, value, words", [
    ("PAPERS_PREFECT_PORT", "abc", ("PAPERS_PREFECT_PORT", "'abc'", "unset it")),
    ("PAPERS_PREFECT_PORT", "70000", ("PAPERS_PREFECT_PORT", "1..65,535")),
    ("PAPERS_MAX_WORKERS", "abc", ("PAPERS_MAX_WORKERS", "'abc'", "unset it")),
    ("PAPERS_MAX_WORKERS", "1_0", ("PAPERS_MAX_WORKERS", "'1_0'")),
])
@pytest.mark.parametrize("command", [("list",), ("run", "x")])
def test_a_bad_setting_is_one_line_before_any_command(variable, value, words, command):
    done = subprocess.run([str(BIN / "papers"), *command], cwd=ROOT, env={**stage_env(ROOT), variable: value},
                          capture_output=True, text=True, timeout=120)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert all(word in lines[0] for word in words), lines[0]


# ------------------------------------------------------------------------ the project's own files: claims, server.pid


def project(tmp_path, claims: str | None = None) -> tuple:
    """A checkout for `papers` to find (.dvc/, params.yaml, every paper's dvc.yaml) whose one claims.json is
    `claims` (None: a folder there), with its own PREFECT_HOME; (root, environment)."""
    root = tmp_path / "checkout"
    (root / ".dvc").mkdir(parents=True)
    shutil.copy(ROOT / "params.yaml", root / "params.yaml")
    for dvc_yaml in ROOT.glob("stages/*/dvc.yaml"):  # stages/ without __init__.py: the real package still loads
        (root / dvc_yaml.relative_to(ROOT)).parent.mkdir(parents=True)
        shutil.copy(dvc_yaml, root / dvc_yaml.relative_to(ROOT))
    claims_file = root / "data" / PAPER / "claims.json"
    claims_file.parent.mkdir(parents=True)
    claims_file.mkdir() if claims is None else claims_file.write_text(claims)
    env = {key: value for key, value in stage_env(root).items() if not key.startswith("PREFECT_API")}
    env |= {"PREFECT_HOME": str(root / ".prefect"), "PAPERS_PREFECT_PORT": "59173"}  # no server of anyone's
    return root, env


PAPER = next(iter(papers_by_size()))
GOOD_CLAIMS = json.loads((ROOT / "data" / PAPER / "claims.json").read_text())


@pytest.mark.parametrize("claims, words", [
    ("{not json", ("not JSON",)),
    (json.dumps({**GOOD_CLAIMS, "claims": 3}), ("'claims' must be a list",)),
    (json.dumps({**GOOD_CLAIMS, "claims": [{**GOOD_CLAIMS["claims"][0], "ours": "high"}]}), ("'ours'",)),
    (None, ("not a regular file",)),
])
def test_a_broken_claims_file_is_one_line_naming_it(tmp_path, claims, words):
    root, env = project(tmp_path, claims)
    names = (f"data/{PAPER}/claims.json", f"papers run {PAPER}", *words)
    check_rows([bad(("list",), *names), bad(("report",), *names)], cwd=root, env=env)


def test_a_folder_at_the_server_pid_file_is_one_line(tmp_path):
    root, env = project(tmp_path, json.dumps(GOOD_CLAIMS))
    (root / ".prefect" / "server.pid").mkdir(parents=True)
    check_rows([bad(("server", command), "server.pid", "is a folder", "remove it") for command in ("status", "start", "stop")],
               cwd=root, env=env)


# ------------------------------------------------------------------------------------------ papers' commands

def test_deploy_refuses_a_path_for_a_paper(tmp_path):
    check_rows([bad(("deploy", "../../x"), "'../../x'", "no such paper")], cwd=tmp_path)


# ------------------------------------------------------------------------------------------------ the stage runner


def toy(tmp_path, monkeypatch):
    """A checkout with one paper, `toy`: generate writes data/toy/arrays, solve reads them and writes result.txt (its
    flow a stub); the Prefect server and its watch stubbed; the MLflow companion real, in the checkout's store."""
    import stages.runner as runner
    from stages.guard import StageGuard
    from tasks.core.stage import StageReport

    root = tmp_path / "toy"
    (root / ".dvc").mkdir(parents=True)
    (root / "params.yaml").write_text("profile: smoke\n")
    (root / "stages" / "toy").mkdir(parents=True)
    (root / "stages" / "toy" / "dvc.yaml").write_text(yaml.safe_dump({"stages": {
        "toy-generate": {"cmd": "python -m stages toy generate", "outs": ["data/toy/arrays"]},
        "toy-solve": {"cmd": "python -m stages toy solve", "deps": ["data/toy/arrays"], "outs": ["data/toy/result.txt"]}}}))
    (root / "data" / "toy" / "arrays").mkdir(parents=True)
    np.savez(root / "data" / "toy" / "arrays" / "a.npz", x=np.ones(3))

    def solve(params, context):
        context.out("result.txt").write_text("done\n")
        return StageReport()

    monkeypatch.setattr(runner, "paper_pipeline", lambda paper: SimpleNamespace(Params=None, STAGES={"solve": solve}))
    monkeypatch.setattr(runner, "load_paper_params", lambda *args: SimpleNamespace(model_dump=lambda mode: {}))
    monkeypatch.setattr(runner.server, "start", lambda: "http://127.0.0.1:9/api")
    monkeypatch.setattr(StageGuard, "watch", lambda self, url: None)
    for key, value in {"PYTHONPATH": str(ROOT), "PAPERS_WARM": "0", "PAPERS_INVOCATION": "test"}.items():
        monkeypatch.setenv(key, value)  # the companion: this project's code, started here, not in a warm host
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    return root


def one_error_line(capfd) -> str:
    err = capfd.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    return lines[0]


def test_a_store_that_cannot_record_the_run_fails_the_stage_before_its_outputs(tmp_path, monkeypatch, capfd):
    from stages.runner import run_stage

    root = toy(tmp_path, monkeypatch)
    (root / "mlflow" / "mlflow.db").mkdir(parents=True, mode=0o700)  # unopenable, even by root (as CI runs)
    (root / "mlflow").chmod(0o700)
    assert run_stage(root, "toy", "solve") == 2
    line = one_error_line(capfd)
    assert "MLflow store" in line and "mlflow.db" in line and "writable" in line, line
    assert not (root / "data" / "toy" / "result.txt").exists()


@pytest.mark.parametrize("content, words", [
    (b"not an archive at all" * 10, ("a.npz", "not a readable .npz")),
    ("truncated", ("a.npz", "not a readable .npz")),
    ("member", ("a.npz", "its array x.npy", "not a readable .npz")),
])
def test_a_broken_array_input_names_the_file_and_the_stage_to_rerun(tmp_path, monkeypatch, content, words):
    from stages.data_checks import BrokenInput, check_array_deps
    from stages.spec import stage_spec

    root = toy(tmp_path, monkeypatch)
    path = root / "data" / "toy" / "arrays" / "a.npz"
    if content == "truncated":
        path.write_bytes(path.read_bytes()[:100])
    elif content == "member":  # a zip whose array is not one
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("x.npy", b"\x00garbage" * 20)
    else:
        path.write_bytes(content)
    with pytest.raises(BrokenInput) as refused:
        check_array_deps(root, stage_spec(root, "toy", "solve"))
    message = str(refused.value)
    assert all(word in message for word in words) and "dvc repro stages/toy/dvc.yaml:toy-generate" in message, message
