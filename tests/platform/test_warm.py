"""The warm host runs `python -m <module>` in a fork exactly as a fresh interpreter would: the
caller's folder, environment, arguments, stdin/stdout and exit status, its own copy of the
project's packages, signals passed on, and no child left behind when the caller dies."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from stages.warm import MAX_MESSAGE, host_key, paths, receive_with_fds, send_with_fds
from tasks.core import messages
from tests.conftest import private_runtime_folder, stop_private_hosts

PROBE = textwrap.dedent("""
    import json, multiprocessing, os, signal, sys, time
    from concurrent.futures import ProcessPoolExecutor
    import tasks
    from stages.warm import in_warm_child

    def square(x):
        return x * x, in_warm_child(), os.getpid()

    if __name__ == "__main__":  # a spawned worker imports this module too
        if sys.argv[1:] == ["pool"]:
            with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
                print(json.dumps(list(pool.map(square, range(6)))))
            sys.exit(0)
        if sys.argv[1:] == ["wait"]:
            signal.signal(signal.SIGTERM, lambda *_: (print("got SIGTERM", flush=True), sys.exit(143)))
            print(os.getpid(), flush=True)
            time.sleep(120)
        print(json.dumps({"warm": in_warm_child(), "cwd": os.getcwd(), "argv": sys.argv[1:], "probe": os.environ.get("PROBE"),
                          "stdin": sys.stdin.readline().strip(), "tasks": tasks.WHERE}))
        sys.exit(3)
""")


@pytest.fixture(scope="module", autouse=True)
def own_hosts():
    """The module's hosts live in a runtime folder of its own: stop_hosts() below stops them, not the host that a
    pipeline test beside this one is running a stage in."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_RUNTIME_DIR", str(private_runtime_folder()))
        yield
    stop_private_hosts()


def caller_env(**extra: str) -> dict:
    return {**os.environ, **extra}


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """A folder with the probe and a `tasks` package of its own (the host must import this one)."""
    folder = tmp_path_factory.mktemp("warm")
    (folder / "probe.py").write_text(PROBE)
    (folder / "tasks").mkdir()
    (folder / "tasks" / "__init__.py").write_text("WHERE = __file__\n")
    return folder


def probe(folder: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "stages.warm", "probe", *args], cwd=folder, input="hello\n",
                          env=caller_env(**env), capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def host(folder: Path) -> Path:
    """A host serving this test's environment (the first call starts it and runs in-process)."""
    first = probe(folder, "first")
    assert first.returncode == 3, first.stderr
    socket_path = paths(host_key(caller_env()))["sock"]
    deadline = time.monotonic() + 120
    while not socket_path.exists():
        assert time.monotonic() < deadline, f"no warm host after 120 s; log: {paths(host_key(caller_env()))['log']}"
        time.sleep(0.2)
    return socket_path


def test_a_module_runs_in_a_fork_with_the_callers_folder_environment_arguments_stdin_and_status(folder, host):
    done = probe(folder, "a", "b c", PROBE="x")
    assert done.returncode == 3, done.stderr
    seen = json.loads(done.stdout)
    assert seen == {"warm": True, "cwd": str(folder), "argv": ["a", "b c"], "probe": "x", "stdin": "hello",
                    "tasks": str(folder / "tasks" / "__init__.py")}


def test_off_runs_in_process_with_the_same_result(folder, host):
    done = probe(folder, "a", PAPERS_WARM="0", PROBE="y")
    assert done.returncode == 3, done.stderr
    seen = json.loads(done.stdout)
    assert seen["warm"] is False and seen["probe"] == "y" and seen["tasks"] == str(folder / "tasks" / "__init__.py")


def test_a_signal_to_the_caller_reaches_the_child_and_its_status_comes_back(folder, host):
    caller = subprocess.Popen([sys.executable, "-m", "stages.warm", "probe", "wait"], cwd=folder, env=caller_env(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    child = int(caller.stdout.readline())
    assert child != caller.pid and psutil.Process(child).ppid() != caller.pid  # a fork of the host
    caller.send_signal(signal.SIGTERM)
    out, _ = caller.communicate(timeout=30)
    assert "got SIGTERM" in out and caller.returncode == 143


def test_a_killed_caller_takes_its_child_with_it(folder, host):
    caller = subprocess.Popen([sys.executable, "-m", "stages.warm", "probe", "wait"], cwd=folder, env=caller_env(),
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    child = psutil.Process(int(caller.stdout.readline()))
    caller.kill()
    caller.wait()
    gone, _ = psutil.wait_procs([child], timeout=15)
    assert gone, "the child of a killed caller still runs"


def test_a_spawned_pool_worker_starts_as_a_fork_of_the_host_and_computes_the_same(folder, host):
    warm = probe(folder, "pool")
    cold = probe(folder, "pool", PAPERS_WARM="0")
    assert warm.returncode == cold.returncode == 0, warm.stderr + cold.stderr
    warm_rows, cold_rows = json.loads(warm.stdout), json.loads(cold.stdout)
    assert [r[0] for r in warm_rows] == [r[0] for r in cold_rows] == [x * x for x in range(6)]
    assert all(r[1] for r in warm_rows) and not any(r[1] for r in cold_rows)


def test_server_stop_stops_the_hosts_of_this_environment_whatever_the_interpreters_name(folder, host):
    """`papers` runs as python3.11, stages as python: both are this environment's interpreter."""
    host_pid = json.loads(paths(host_key(caller_env()))["json"].read_text())["pid"]
    other_name = Path(sys.executable).with_name(f"python{sys.version_info.major}.{sys.version_info.minor}")
    done = subprocess.run([str(other_name), "-c", "from stages.warm import stop_hosts; print(stop_hosts())"],
                          cwd=folder, env=caller_env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and int(done.stdout) >= 1, done.stderr
    gone, _ = psutil.wait_procs([psutil.Process(host_pid)], timeout=30)
    assert gone, "the host still runs after stop_hosts"


def test_descriptors_travel_with_their_message_and_a_bad_frame_closes_them_again():
    caller, host = socket.socketpair()
    reading, writing = os.pipe()
    with caller, host:
        send_with_fds(caller, {"fds": [1]}, [writing])
        message, fds = receive_with_fds(host, max_fds=4)
        assert message == {"fds": [1]} and len(fds) == 1
        os.write(fds[0], b"x")
        os.close(fds[0])
        assert os.read(reading, 1) == b"x"
        socket.send_fds(caller, [messages.HEADER.pack(MAX_MESSAGE + 1)], [writing])
        with pytest.raises(messages.MessageError, match="over the limit"):
            receive_with_fds(host, max_fds=4)
    os.close(writing)
    assert os.read(reading, 1) == b"", "the descriptor that came with the bad frame is still open"
    os.close(reading)
