"""A run at another profile than the committed one is a DVC experiment: the checkout stays as it was."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from tests.conftest import dvc, papers, stage_env
from tests.integration.test_faults import add_nappy

pytestmark = pytest.mark.integration

PARAMS = "nappy:\n  base: {workers: 1, nap_s: 0.1}\n  smoke: {}\n  default: {}\n  full: {}\n"


def test_a_smoke_run_of_a_default_checkout_leaves_git_status_clean(repo_copy, prefect_server):
    add_nappy(repo_copy, PARAMS)
    params = repo_copy / "params.yaml"
    params.write_text(re.sub(r"(?m)^profile:.*$", "profile: default", params.read_text()))
    (repo_copy / ".gitignore").write_text((repo_copy / ".gitignore").read_text() + "/markers\n")
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-qam", "nappy"], cwd=repo_copy,
                   check=True, capture_output=True)
    subprocess.run(["git", "add", "-A"], cwd=repo_copy, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-qm", "nappy files"],
                   cwd=repo_copy, check=True, capture_output=True)

    done = papers(repo_copy, "run", "nappy", "--profile", "smoke")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "The checkout is unchanged" in done.stdout
    status = subprocess.run(["git", "status", "--porcelain"], cwd=repo_copy, capture_output=True, text=True).stdout
    assert status == "", status
    name = re.search(r"dvc exp apply (\S+)`", done.stdout).group(1)
    shown = subprocess.run([sys.executable, "-m", "dvc", "exp", "show", "--json"], cwd=repo_copy, env=stage_env(repo_copy),
                           capture_output=True, text=True, check=True).stdout
    assert name in shown and json.loads(shown)
    # Its stage tracked to the checkout's MLflow store, at the experiment's profile.
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{repo_copy / 'mlflow' / 'mlflow.db'}")
    runs = client.search_runs([client.get_experiment_by_name("nappy").experiment_id], "tags.kind = 'stage'")
    assert [(r.data.tags["profile"], r.info.status) for r in runs] == [("smoke", "FINISHED")]


def test_a_stage_depends_on_its_active_profile_only(repo_copy, prefect_server):
    """Editing the `full` profile leaves the smoke stages alone; editing `smoke` or `base` reruns them."""
    add_nappy(repo_copy, PARAMS)
    dvc(repo_copy, "repro", "stages/nappy/dvc.yaml")
    params = repo_copy / "stages" / "nappy" / "params.yaml"
    original = params.read_text()
    params.write_text(original.replace("  full: {}", "  full: {workers: 3}"))
    assert "up to date" in dvc(repo_copy, "status", "stages/nappy/dvc.yaml").stdout
    for edited, key in (("  smoke: {}", "nappy.smoke"), ("base: {workers: 1,", "nappy.base")):
        params.write_text(original.replace(edited, edited.replace("{}", "{workers: 3}").replace("{workers: 1,", "{workers: 3,")))
        assert key in dvc(repo_copy, "status", "stages/nappy/dvc.yaml").stdout
