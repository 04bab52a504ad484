"""prefect.yaml deploys a paper's pipeline to the local server; a process worker runs it to completion."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import papers_by_size, stage_env

pytestmark = pytest.mark.integration

PREFECT = str(Path(sys.executable).with_name("prefect"))
PAPERS = str(Path(sys.executable).with_name("papers"))
PAPER = next(iter(papers_by_size()))


def run(repo, *command, timeout=600, env=None):
    done = subprocess.run(list(command), cwd=repo, env=env or stage_env(repo), capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_a_papers_deployment_runs_on_a_process_worker(repo_copy, prefect_server):
    # Deploy under test names so a developer's own deployment and work pool are left alone.
    prefect_yaml = repo_copy / "prefect.yaml"
    prefect_yaml.write_text(prefect_yaml.read_text().replace(f"{PAPER}-pipeline", f"{PAPER}-pipeline-test")
                            .replace("papers-process", "papers-test-process"))
    run(repo_copy, PREFECT, "work-pool", "create", "papers-test-process", "--type", "process", "--overwrite")
    run(repo_copy, PREFECT, "--no-prompt", "deploy", "--name", f"{PAPER}-pipeline-test")
    try:
        started = run(repo_copy, PREFECT, "deployment", "run", f"reproduce-paper/{PAPER}-pipeline-test")
        flow_run_id = re.search(r"UUID:\s*([0-9a-f-]{36})", started).group(1)
        # The worker as a user starts it from a plain shell: the environment's folder is not on PATH.
        # Nothing of the project's environment: no venv on PATH, no PREFECT_API_URL, no credential, no PAPERS_ROOT;
        # only the Prefect home of the checkout that started the server (a user's one checkout has both).
        plain_shell = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root"), "DO_NOT_TRACK": "true",
                       "PREFECT_HOME": os.environ["PREFECT_HOME"]}
        run(repo_copy, PAPERS, "prefect", "worker", "start", "--pool", "papers-test-process", "--run-once", timeout=900,
            env=plain_shell)
        inspected = run(repo_copy, PREFECT, "flow-run", "inspect", flow_run_id)
        assert re.search(r"state_type=StateType\.COMPLETED|'type': 'COMPLETED'|COMPLETED", inspected), inspected
        assert (repo_copy / "data" / PAPER / "claims.json").exists()
        assert (repo_copy / "stages" / PAPER / "dvc.lock").exists()
    finally:
        subprocess.run([PREFECT, "--no-prompt", "deployment", "delete", f"reproduce-paper/{PAPER}-pipeline-test"],
                       cwd=repo_copy, env=stage_env(repo_copy), capture_output=True)
