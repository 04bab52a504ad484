"""`papers ui` serves the MLflow UI on 127.0.0.1 next to the Prefect UI and prints both URLs."""
import os
import re
import signal
import time
import urllib.request

import pytest

from tests.conftest import papers

pytestmark = pytest.mark.integration


def test_ui_serves_mlflow_and_prefect(repo_copy, prefect_server, monkeypatch):
    monkeypatch.setenv("PAPERS_MLFLOW_PORT", "5123")
    done = papers(repo_copy, "ui", "--detach")
    assert done.returncode == 0, done.stderr
    assert "MLflow UI: http://127.0.0.1:5123" in done.stdout and "Prefect UI: http://127.0.0.1:" in done.stdout
    pid = int(re.search(r"pid (\d+)", done.stdout).group(1))
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen("http://127.0.0.1:5123/health", timeout=2) as response:
                    assert response.status == 200
                    break
            except OSError:
                assert time.monotonic() < deadline, (repo_copy / "mlflow" / "ui.log").read_text()
                time.sleep(1)
        with urllib.request.urlopen(f"{prefect_server}/health", timeout=5) as response:
            assert response.status == 200
    finally:
        os.killpg(pid, signal.SIGTERM)
