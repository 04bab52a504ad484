"""`papers ui` serves the MLflow UI on 127.0.0.1 next to the Prefect UI and prints both URLs; it starts
only MLflow's web server (no job runner), reports a UI that already runs instead of starting a second
one, and says why when the UI cannot start."""
import http.server
import os
import re
import signal
import subprocess
import threading
import time
import urllib.request

import psutil
import pytest

from tests.conftest import BIN, papers, stage_env

pytestmark = pytest.mark.integration

MAX_UI_PROCESSES = 3  # `mlflow ui` and its uvicorn worker; MLflow's job runner alone would add 8


def test_ui_serves_mlflow_and_prefect(repo_copy, prefect_server, monkeypatch):
    monkeypatch.setenv("PAPERS_MLFLOW_PORT", "5123")
    done = papers(repo_copy, "ui", "--detach")
    assert done.returncode == 0, done.stderr
    assert "MLflow UI: http://127.0.0.1:5123" in done.stdout and "Prefect UI: http://127.0.0.1:" in done.stdout
    pid = int(re.search(r"pid (\d+)", done.stdout).group(1))
    try:
        with urllib.request.urlopen("http://127.0.0.1:5123/health", timeout=5) as response:  # answers once it returns
            assert response.status == 200
        with urllib.request.urlopen(f"{prefect_server}/health", timeout=5) as response:
            assert response.status == 200
        ui = psutil.Process(pid)
        for _ in range(10):  # MLflow starts its job runner, when enabled, right after the web server
            tree = [ui, *ui.children(recursive=True)]
            assert len(tree) <= MAX_UI_PROCESSES, [" ".join(p.cmdline())[:120] for p in tree]
            time.sleep(0.5)
        listening = {c.laddr for p in tree for c in p.net_connections("inet") if c.status == psutil.CONN_LISTEN}
        assert listening and all(address.ip == "127.0.0.1" for address in listening), listening

        again = papers(repo_copy, "ui", "--detach")
        assert again.returncode == 0, again.stderr
        assert "MLflow UI already running at http://127.0.0.1:5123" in again.stdout and "pid" not in again.stdout
        assert ui.is_running() and len([ui, *ui.children(recursive=True)]) == len(tree)
    finally:
        os.killpg(pid, signal.SIGTERM)


class _NotMlflow(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"<html>something else</html>")

    def log_message(self, *args):
        pass


def test_ui_refuses_a_port_taken_by_something_else(repo_copy, monkeypatch):
    other = http.server.HTTPServer(("127.0.0.1", 0), _NotMlflow)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("PAPERS_MLFLOW_PORT", str(other.server_port))
        done = papers(repo_copy, "ui", "--detach")
    finally:
        other.shutdown()
    assert done.returncode == 1 and f"port {other.server_port} of 127.0.0.1 is taken by something that is not MLflow" \
        in done.stderr, done.stdout + done.stderr


def test_ui_that_cannot_start_shows_its_log(repo_copy, prefect_server):
    env = stage_env(repo_copy) | {"PAPERS_MLFLOW_PORT": "5124", "MLFLOW_TRACKING_URI": "bogus://nowhere"}  # no such store
    done = subprocess.run([str(BIN / "papers"), "ui", "--detach"], cwd=repo_copy, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "the MLflow UI exited" in done.stderr and "bogus://nowhere" in done.stderr and "pid" not in done.stdout
