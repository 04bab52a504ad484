"""Faults a stage must survive with a bounded, clean end: Ctrl-C, SIGTERM, a killed stage, a lost Prefect server.

The stage under test is a real one (DVC stage, `python -m stages`, a Prefect flow on a process
pool, an MLflow run) of a small paper added to a throwaway copy: its tasks sleep, so the fault
always lands mid-flow, and each task writes a marker named by its worker's pid, so the test can
tell whether any worker outlived the stage.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.conftest import private_runtime_folder, stage_env, stop_private_hosts

pytestmark = pytest.mark.integration

PIPELINE = '''"""A stage that naps on a process pool: the fault tests' workload."""
import os
import time
from pathlib import Path

from prefect import flow, unmapped

from flows.runtime import task_runner
from flows.stage_task import stage_task
from tasks.core.params import Params as Base
from tasks.core.stage import StageReport


class Params(Base):
    workers: int = 2
    nap_s: float = 120.0


@stage_task
def nap(index: int, markers: str, seconds: float) -> int:
    (Path(markers) / f"worker-{os.getpid()}").write_text("")
    time.sleep(seconds)
    return index


@flow(name="nappy-work", task_runner=task_runner("process"))
def work(params: Params, context) -> StageReport:
    context.out("result.txt").write_text("half-written")
    markers = context.root / "markers"
    markers.mkdir(exist_ok=True)
    (markers / f"stage-{os.getpid()}").write_text("")
    [f.result() for f in nap.map(range(params.workers), markers=unmapped(str(markers)), seconds=unmapped(params.nap_s))]
    return StageReport()


STAGES = {"work": work}
'''

DVC_YAML = """vars:
  - ../../params.yaml:profile
stages:
  nappy-work:
    wdir: ../..
    cmd: python -m stages nappy work
    deps:
      - flows/nappy/pipeline.py
    params:
      - params.yaml:
          - profile
      - stages/nappy/params.yaml:
          - nappy.base
          - nappy.${profile}
    outs:
      - data/nappy/result.txt
"""

PARAMS = "nappy:\n  base: {workers: 2, nap_s: 120}\n  smoke: {}\n  default: {}\n  full: {}\n"


def add_nappy(repo: Path, params: str = PARAMS) -> Path:
    """Add the napping paper (flows/nappy, stages/nappy) to a copy of the project."""
    (repo / "flows" / "nappy").mkdir()
    (repo / "flows" / "nappy" / "__init__.py").write_text('"""A one-stage paper that naps on a process pool."""\n')
    (repo / "flows" / "nappy" / "pipeline.py").write_text(PIPELINE)
    (repo / "stages" / "nappy").mkdir()
    (repo / "stages" / "nappy" / "dvc.yaml").write_text(DVC_YAML)
    (repo / "stages" / "nappy" / "params.yaml").write_text(params)
    return repo


@pytest.fixture
def nappy(repo_copy: Path) -> Path:
    return add_nappy(repo_copy)


@pytest.fixture(scope="module", autouse=True)
def own_hosts():
    """These stages run in hosts of their own runtime folder: `papers server stop` below stops the hosts it finds,
    and must not stop the one a pipeline test beside this one is running a stage in."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_RUNTIME_DIR", str(private_runtime_folder()))
        yield
    stop_private_hosts()


def start_repro(repo: Path, env: dict) -> subprocess.Popen:
    """`dvc repro` of the napping stage in its own process group (a terminal's Ctrl-C reaches the group)."""
    return subprocess.Popen([sys.executable, "-m", "dvc", "repro", "stages/nappy/dvc.yaml"], cwd=repo, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)


def wait_for_workers(repo: Path, repro: subprocess.Popen, count: int = 2, timeout: float = 180) -> tuple[int, list[int]]:
    """(stage pid, worker pids) once every worker is napping."""
    deadline = time.monotonic() + timeout
    markers = repo / "markers"
    while time.monotonic() < deadline:
        names = [p.name for p in markers.glob("*")] if markers.is_dir() else []
        workers = [int(n.split("-")[1]) for n in names if n.startswith("worker-")]
        stages = [int(n.split("-")[1]) for n in names if n.startswith("stage-")]
        if stages and len(workers) >= count:
            return stages[0], workers
        assert repro.poll() is None, f"the stage ended before its workers started:\n{repro.stdout.read()}"
        time.sleep(0.2)
    raise AssertionError("the workers did not start in time")


def finish(repro: subprocess.Popen, within: float) -> tuple[int, str, float]:
    started = time.monotonic()
    try:
        output, _ = repro.communicate(timeout=within)
    except subprocess.TimeoutExpired:
        os.killpg(repro.pid, signal.SIGKILL)
        raise AssertionError(f"the stage did not end within {within} s:\n{repro.communicate()[0][-3000:]}") from None
    return repro.returncode, output, time.monotonic() - started


def assert_nothing_left(repo: Path, pids: list[int], within: float = 10.0) -> None:
    deadline = time.monotonic() + within
    alive = pids
    while alive and time.monotonic() < deadline:
        alive = [pid for pid in pids if psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE]
        time.sleep(0.2)
    assert not alive, f"processes outlived the stage: {alive}"
    leftovers = [p.name for p in (repo / "data" / "nappy").glob(".*")] if (repo / "data" / "nappy").exists() else []
    assert not leftovers, f"temporary outputs left behind: {leftovers}"
    assert not (repo / "data" / "nappy" / "result.txt").exists(), "a half-written output was put in place"
    lock = repo / "stages" / "nappy" / "dvc.lock"
    assert not lock.exists() or "nappy-work" not in lock.read_text(), "DVC recorded the interrupted stage"


def stage_runs(repo: Path) -> list:
    """(status, error tag) of the nappy stage and pipeline runs in the copy's MLflow store."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{repo / 'mlflow' / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("nappy")
    return client.search_runs([experiment.experiment_id]) if experiment else []


def assert_runs_failed(repo: Path, reason: str) -> None:
    runs = stage_runs(repo)
    kinds = {run.data.tags.get("kind"): run for run in runs}
    assert set(kinds) == {"stage", "pipeline"}, [(r.data.tags.get("kind"), r.info.status) for r in runs]
    assert all(run.info.status == "FAILED" for run in runs), [(r.data.tags.get("kind"), r.info.status) for r in runs]
    assert reason in kinds["stage"].data.tags.get("error", ""), kinds["stage"].data.tags


def test_ctrl_c_to_the_process_group_fails_the_stage_cleanly(nappy, prefect_server):
    signum = signal.SIGINT  # what Ctrl-C in a terminal sends; SIGTERM takes the same path (tests/platform/test_guard.py)
    repro = start_repro(nappy, stage_env(nappy))
    stage, workers = wait_for_workers(nappy, repro)
    os.killpg(repro.pid, signum)
    code, output, took = finish(repro, within=60)
    assert code != 0, output
    assert f"interrupted by {signal.Signals(signum).name}" in output
    assert_nothing_left(nappy, [stage, *workers])
    assert_runs_failed(nappy, f"interrupted by {signal.Signals(signum).name}")
    assert flow_run_states(stage) == ["CRASHED"]


def flow_run_states(stage_pid: int, api_url: str | None = None) -> list[str]:
    """States of the Prefect flow runs the stage process `stage_pid` started (found by its pid tag)."""
    from stages.flow_runs import client_for, open_runs, pid_tag

    with client_for(api_url) as client:
        return [run.state.type.value for run in open_runs(client, [pid_tag(stage_pid)])]


def test_a_killed_stage_leaves_no_workers_and_its_rerun_no_temporary_outputs(nappy, prefect_server):
    repro = start_repro(nappy, stage_env(nappy))
    stage, workers = wait_for_workers(nappy, repro)
    os.kill(stage, signal.SIGKILL)  # nothing in the stage can run: its workers must notice on their own
    code, output, _ = finish(repro, within=60)
    assert code != 0
    deadline = time.monotonic() + 10
    while any(psutil.pid_exists(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [pid for pid in workers if psutil.pid_exists(pid)], "pool workers outlived a SIGKILLed stage"
    assert [p for p in (nappy / "data" / "nappy").glob(".result.txt.*")], "expected the killed stage's staging folder"
    # The companion saw the stage die and closed its run FAILED.
    deadline = time.monotonic() + 30
    while any(r.info.status == "RUNNING" for r in stage_runs(nappy)) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert_runs_failed(nappy, "ended without closing its run")
    # The next run of the stage clears what the killed one left (interrupted again to keep it short).
    for marker in (nappy / "markers").glob("*"):
        marker.unlink()
    stale = {p.name for p in (nappy / "data" / "nappy").glob(".result.txt.*")}
    repro = start_repro(nappy, stage_env(nappy))
    stage, workers = wait_for_workers(nappy, repro)
    assert not stale & {p.name for p in (nappy / "data" / "nappy").glob(".result.txt.*")}, "stale staging kept"
    os.killpg(repro.pid, signal.SIGINT)
    finish(repro, within=60)
    assert_nothing_left(nappy, [stage, *workers])


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_lost_prefect_server_fails_the_stage_within_a_bounded_time(nappy):
    # A server of the copy's own, so killing it does not take the suite's shared server down.
    from stages.guard import REFUSED_FOR_S

    port = free_port()
    env = {**stage_env(nappy), "PREFECT_HOME": str(nappy / ".prefect-own"), "PREFECT_API_URL": f"http://127.0.0.1:{port}/api",
           "PREFECT_SERVER_API_PORT": str(port), "PAPERS_PREFECT_PORT": str(port)}
    server = subprocess.Popen([str(Path(sys.executable).with_name("prefect")), "server", "start", "--host", "127.0.0.1",
                               "--port", str(port)], cwd=nappy, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        from stages.server import is_up

        deadline = time.monotonic() + 120
        while not is_up(env["PREFECT_API_URL"]):
            assert time.monotonic() < deadline and server.poll() is None, "the copy's Prefect server did not start"
            time.sleep(0.5)
        repro = start_repro(nappy, env)
        stage, workers = wait_for_workers(nappy, repro, timeout=240)
        os.killpg(server.pid, signal.SIGKILL)
        code, output, took = finish(repro, within=REFUSED_FOR_S + 45)
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
    assert code != 0, output
    assert "went away" in output and took < REFUSED_FOR_S + 30, (took, output[-2000:])
    assert_nothing_left(nappy, [stage, *workers])
    assert_runs_failed(nappy, "went away")
    # The server comes back through `papers server start`, which closes the flow runs left open.
    restart = subprocess.run([str(Path(sys.executable).with_name("papers")), "server", "start"], cwd=nappy, env=env,
                             capture_output=True, text=True, timeout=180)
    try:
        assert restart.returncode == 0, restart.stderr
        assert flow_run_states(stage, env["PREFECT_API_URL"]) == ["CRASHED"]
    finally:
        subprocess.run([str(Path(sys.executable).with_name("papers")), "server", "stop"], cwd=nappy, env=env,
                       capture_output=True, timeout=120)
