"""The services the project starts: loopback only, and a local server that recovers from a stale pid file."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT, stage_env

LISTENERS = r"""
import os, sys
import psutil
from flows.runtime import task_runner
from distributed import LocalCluster
if __name__ == "__main__":
    with LocalCluster(**task_runner().cluster_kwargs) as cluster:
        family = [os.getpid()] + [p.pid for p in psutil.Process().children(recursive=True)]
        print(sorted({c.laddr.ip for c in psutil.net_connections("inet") if c.status == "LISTEN" and c.pid in family}))
"""


def test_the_dask_runner_listens_on_loopback_only_dashboard_included(tmp_path):
    script = tmp_path / "listeners.py"  # a file: Dask's worker processes are spawned and re-import __main__
    script.write_text(LISTENERS)
    env = {**stage_env(ROOT), "PAPERS_TASK_RUNNER": "dask", "PAPERS_MAX_WORKERS": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['127.0.0.1']", done.stdout


def test_a_stale_pid_file_is_cleared_so_start_and_stop_work_again(tmp_path, monkeypatch):
    from stages import server

    monkeypatch.setenv("PREFECT_HOME", str(tmp_path))
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # a pid that no longer runs: a server killed without `papers server stop`
    (tmp_path / "server.pid").write_text(str(gone.pid))
    assert server.server_pid() is None and not (tmp_path / "server.pid").exists()
    (tmp_path / "server.pid").write_text(str(os.getpid()))  # alive, but not a Prefect server
    assert server.stop() is False and not (tmp_path / "server.pid").exists()
    (tmp_path / "server.pid").write_text("garbage")
    assert server.server_pid() is None and not (tmp_path / "server.pid").exists()


def test_stage_commands_find_this_interpreter_from_a_plain_shell():
    from stages.environment import use_this_interpreter

    env = use_this_interpreter({"PATH": "/usr/bin:/bin"})
    found = subprocess.run(["sh", "-c", "command -v python"], env=env, capture_output=True, text=True)
    assert Path(found.stdout.strip()).parent == Path(sys.executable).parent


def test_an_experiment_copy_tracks_to_its_checkout(tmp_path):
    from stages.environment import home_repository

    assert home_repository(tmp_path / "repo" / ".dvc" / "tmp" / "exps" / "tmpab12cd34") == (tmp_path / "repo").resolve()
    assert home_repository(tmp_path / "repo") == (tmp_path / "repo").resolve()
