"""MLflow on a machine shared with another local account (papers-other, tests/platform/second_user.py): a real
`papers ui` answers that account 401 (no listing, no tag, no account of its own) and takes no upload, while its
owner reads the runs with the login from the 0600 file; the store is 0700/0600; and each attempt at a stage is
a run of its own, so a failed rerun leaves the earlier FINISHED run as it ended."""
from __future__ import annotations

import base64
import http.server
import json
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from stages.ui_login import PASSWORD, USERS
from tasks.core import tracking
from tests.conftest import BIN, smoke_copy, stage_env
from tests.platform.second_user import other  # noqa: F401

TAGS = {"paper": "paper", "stage": "solve", "profile": "smoke"}

# One HTTP request, run as either account with the system's python: prints the status, then the body.
REQUEST = r"""
import sys, urllib.error, urllib.request

url, method, body, authorization = sys.argv[1:5]
headers = {"Content-Type": "application/json", **({"Authorization": authorization} if authorization else {})}
request = urllib.request.Request(url, data=body.encode() or None, method=method, headers=headers)
try:
    with urllib.request.urlopen(request, timeout=30) as response:
        print(response.status, response.read().decode(), end="")
except urllib.error.HTTPError as error:
    print(error.code, error.read().decode(), end="")
"""


@dataclass(frozen=True)
class ServedStore:
    copy: Path
    url: str
    said: str  # what `papers ui --detach` printed
    client: MlflowClient  # of the copy's store, as its owner
    experiment: str
    run_id: str
    tags: dict[str, str]  # the run's, as it finished


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def finished_stage_run(client, experiment: str, inputs_hash: str, invocation: str = "inv") -> str:
    parent = tracking.parent_run(client, experiment, invocation, TAGS)
    run_id, _ = tracking.stage_run(client, experiment, parent, inputs_hash, TAGS)
    tracking.finish(client, run_id, ok=True)
    return run_id


@pytest.fixture(scope="module")
def served(tmp_path_factory, prefect_server):
    """A copy holding one FINISHED stage run, its store served by a real `papers ui --detach` on a free port
    (started once: the first start migrates the store), stopped at the end."""
    copy = smoke_copy(tmp_path_factory.mktemp("shared-mlflow") / "repo")
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("MLFLOW_TRACKING_URI", raising=False)
        client = tracking.client_for(copy)
    experiment = tracking.experiment_id(client, "paper", copy)
    run_id = finished_stage_run(client, experiment, "h")
    port = free_port()
    done = subprocess.run([str(BIN / "papers"), "ui", "--detach"], cwd=copy, capture_output=True, text=True,
                          env=stage_env(copy) | {"PAPERS_MLFLOW_PORT": str(port)}, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    pid = int(re.search(r"pid (\d+)", done.stdout).group(1))
    try:
        yield ServedStore(copy, f"http://127.0.0.1:{port}", done.stdout, client, experiment, run_id,
                          dict(client.get_run(run_id).data.tags))
    finally:
        os.killpg(pid, signal.SIGTERM)


def answer(done: subprocess.CompletedProcess) -> tuple[int, str]:
    assert done.returncode == 0, done.stderr
    status, _, body = done.stdout.partition(" ")
    return int(status), body


def as_other(other, served: ServedStore, method: str, path: str, body: str = "") -> tuple[int, str]:
    return answer(other.python(REQUEST, served.url + path, method, body, ""))


def as_owner(served: ServedStore, method: str, path: str, body: str = "") -> tuple[int, str]:
    """The request with the login `papers ui` printed: the OS user and the password in the 0600 file."""
    user = re.search(r"login .*: user (\S+), password in (\S+)", served.said)
    credential = f"{user.group(1)}:{(served.copy / user.group(2)).read_text().strip()}"
    authorization = "Basic " + base64.b64encode(credential.encode()).decode()
    return answer(subprocess.run([sys.executable, "-c", REQUEST, served.url + path, method, body, authorization],
                                 capture_output=True, text=True, timeout=60))


def search_runs(served: ServedStore) -> tuple[str, str, str]:
    return "POST", "/api/2.0/mlflow/runs/search", json.dumps({"experiment_ids": [served.experiment]})


def test_another_account_gets_401_from_every_page_and_api_of_the_ui(served, other):
    refused = {
        "the UI's page": ("GET", "/", ""),
        "the version (how `papers ui` tells MLflow is up)": ("GET", "/version", ""),
        "listing experiments": ("GET", "/api/2.0/mlflow/experiments/search?max_results=10", ""),
        "searching runs": search_runs(served),
        "searching runs as the UI does": ("POST", "/ajax-api/2.0/mlflow/runs/search", search_runs(served)[2]),
        "reading the run": ("GET", f"/api/2.0/mlflow/runs/get?run_id={served.run_id}", ""),
        "making itself an account": ("POST", "/api/2.0/mlflow/users/create",
                                     json.dumps({"username": "intruder", "password": "a-long-password-1234"})),
    }
    statuses = {what: as_other(other, served, *request)[0] for what, request in refused.items()}
    assert statuses == dict.fromkeys(refused, 401)
    assert as_other(other, served, "GET", "/health") == (200, "OK")  # open, as MLflow keeps it: it tells nothing


def test_the_owner_reads_the_runs_with_the_login_from_the_0600_file(served):
    assert re.search(r"password in mlflow/ui-password \(readable by you alone\)", served.said), served.said
    status, body = as_owner(served, *search_runs(served))
    assert status == 200 and served.run_id in {run["info"]["run_id"] for run in json.loads(body)["runs"]}


def test_another_account_cannot_tag_a_run(served, other):
    tag = json.dumps({"run_id": served.run_id, "key": "owned", "value": "by papers-other"})
    assert as_other(other, served, "POST", "/api/2.0/mlflow/runs/set-tag", tag)[0] == 401
    assert dict(served.client.get_run(served.run_id).data.tags) == served.tags


def test_no_account_can_upload_through_an_artifact_proxy(served, other):
    path = f"/api/2.0/mlflow-artifacts/artifacts/{served.experiment}/{served.run_id}/artifacts/planted.txt"
    assert as_other(other, served, "PUT", path, "planted")[0] == 401
    assert as_owner(served, "PUT", path, "planted")[0] == 503  # there is no proxy: the UI reads mlflow/artifacts itself
    assert not list(served.copy.rglob("planted.txt")) and not (served.copy / "mlartifacts").exists()


def mode(path: Path) -> tuple[int, int]:
    info = path.lstat()
    return info.st_uid, stat.S_IMODE(info.st_mode)


def test_the_store_and_the_login_are_the_owners_alone(served):
    store = served.copy / "mlflow"
    me = os.geteuid()
    assert mode(store) == (me, 0o700)
    assert {name: mode(store / name) for name in ("mlflow.db", PASSWORD, USERS)} == dict.fromkeys(
        ("mlflow.db", PASSWORD, USERS), (me, 0o600))


def test_an_older_checkouts_open_store_is_made_private(tmp_path, monkeypatch):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    store = tmp_path / "mlflow"
    tracking.client_for(tmp_path)
    store.chmod(0o755)  # as an older checkout left it
    (store / "mlflow.db").chmod(0o644)
    tracking.client_for(tmp_path)
    assert (mode(store)[1], mode(store / "mlflow.db")[1]) == (0o700, 0o600)


def test_a_failed_rerun_is_a_new_run_and_leaves_the_finished_one_as_it_ended(tmp_path, monkeypatch):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    client = tracking.client_for(tmp_path)
    experiment = tracking.experiment_id(client, "paper", tmp_path)
    finished = client.get_run(finished_stage_run(client, experiment, "h", "first"))
    parent = tracking.parent_run(client, experiment, "second", TAGS)
    rerun, _ = tracking.stage_run(client, experiment, parent, "h", TAGS)
    tracking.set_tags(client, rerun, {"error": "OSError: [Errno 28] No space left on device"})
    tracking.finish(client, rerun, ok=False)
    again = client.get_run(finished.info.run_id)
    assert (again.info.status, again.info.start_time, again.info.end_time) == \
        ("FINISHED", finished.info.start_time, finished.info.end_time)
    assert again.data.tags == finished.data.tags and "error" not in again.data.tags
    failed = client.get_run(rerun)
    assert failed.info.status == "FAILED" and failed.data.tags["inputs_hash"] == "h"
    # The lookup a user makes in the UI or the API, the newest FINISHED run of these inputs, finds the first.
    by_hash = client.search_runs([experiment], "tags.inputs_hash = 'h' and attributes.status = 'FINISHED'",
                                 order_by=["attributes.start_time DESC"])
    assert [run.info.run_id for run in by_hash] == [finished.info.run_id]


class _OpenMlflow(http.server.BaseHTTPRequestHandler):
    """/version as an MLflow without a login answers it (`mlflow ui` started by hand, or by an older `papers ui`)."""

    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"3.17.2")

    def log_message(self, *args):
        pass


def test_ui_will_not_pass_off_an_mlflow_without_a_login_as_its_own(repo_copy):
    open_ui = http.server.HTTPServer(("127.0.0.1", 0), _OpenMlflow)
    threading.Thread(target=open_ui.serve_forever, daemon=True).start()
    try:
        done = subprocess.run([str(BIN / "papers"), "ui", "--detach"], cwd=repo_copy, capture_output=True, text=True,
                              env=stage_env(repo_copy) | {"PAPERS_MLFLOW_PORT": str(open_ui.server_port)}, timeout=120)
    finally:
        open_ui.shutdown()
    assert done.returncode == 1 and "an MLflow UI without a login (every local account may use it) runs at" in done.stderr, \
        done.stdout + done.stderr
