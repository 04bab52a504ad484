"""On a shared machine another local account is the threat: each attack that worked before is repeated here
as that account (`papers-other`, tests/platform/second_user.py) and shown refused; the warm host's child
keeps the caller's limits, RNG freshness and job control, and dies with its host (FAILED everywhere).

Here: the warm host (squatted, symlinked or open folders, a foreign socket, a foreign caller, planted records,
another checkout's code, limits, affinity, RNG, Ctrl-Z, host death) and the Prefect API (401 without the
checkout's credential), then warm and cold smoke runs with identical claims. The other attacks have modules of
their own, with the same second account: test_shared_machine_mlflow.py (the MLflow UI and store, a run per
attempt), test_shared_machine_outputs.py (output paths) and test_shared_machine_runners.py (Dask, Flower).
"""
from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from stages.warm import host_key, peer_uid
from tests.conftest import ROOT, papers_by_size, private_runtime_folder, stage_env, stop_private_hosts
from tests.platform.second_user import other  # noqa: F401 - the fixture

PROBE = textwrap.dedent("""
    import json, os, random, resource, signal, sys, time
    from stages.warm import in_warm_child

    if __name__ == "__main__":
        mode = sys.argv[1]
        if mode == "wait":
            print(os.getpid(), flush=True)
            time.sleep(120)
        if mode == "write":  # five 80 KB files, as a stage's outputs
            try:
                for i in range(5):
                    with open(sys.argv[2] + f"/out{i}.bin", "wb") as handle:
                        handle.write(b"x" * 80_000)
            except OSError as error:
                print(json.dumps({"warm": in_warm_child(), "error": error.errno}))
                sys.exit(1)
            print(json.dumps({"warm": in_warm_child(), "error": None}))
            sys.exit(0)
        import torch
        print(json.dumps({"warm": in_warm_child(), "affinity": sorted(os.sched_getaffinity(0)),
                          "threads": torch.get_num_threads(), "torch_seed": torch.initial_seed(),
                          "random": random.random(), "nofile": resource.getrlimit(resource.RLIMIT_NOFILE)}))
""")


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("shared")
    (folder / "probe.py").write_text(PROBE)
    return folder


def probe(folder: Path, *args: str, env: dict | None = None, preexec=None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "stages.warm", "probe", *args], cwd=folder, env=env or dict(os.environ),
                          capture_output=True, text=True, timeout=timeout, preexec_fn=preexec)


def warm_probe(folder: Path, *args: str, env: dict | None = None, preexec=None) -> dict:
    """The probe's answer once a host for this caller's environment and limits serves (the first call starts it)."""
    deadline = time.monotonic() + 180
    while True:
        done = probe(folder, *args, env=env, preexec=preexec)
        answer = json.loads(done.stdout.strip().splitlines()[-1])
        if answer["warm"] or time.monotonic() > deadline:
            assert answer["warm"], f"no warm host after 180 s: {done.stderr}"
            return answer
        time.sleep(1.0)


def own_runtime_folder() -> dict:
    """A caller environment whose host folder is a fresh private one: the test's hosts are its own."""
    return {**os.environ, "XDG_RUNTIME_DIR": str(private_runtime_folder())}


@pytest.fixture(scope="module", autouse=True)
def stop_the_tests_hosts():
    """Each host these tests start is stopped when they end, not after its idle time."""
    yield
    stop_private_hosts()


def host_pid(env: dict) -> int:
    sock = paths_for(env)["sock"]
    deadline = time.monotonic() + 120
    while not sock.exists():
        assert time.monotonic() < deadline, "no warm host socket after 120 s"
        time.sleep(0.2)
    with socket.socket(socket.AF_UNIX) as connection:
        connection.connect(str(sock))
        return peer_uid(connection)[0]


def paths_for(env: dict) -> dict[str, Path]:
    """The host's files for a caller with environment `env` (computed in a child: host_folder reads os.environ)."""
    done = subprocess.run([sys.executable, "-c", "import json; from stages.warm import host_key, paths; "
                                                 "print(json.dumps({k: str(v) for k, v in paths(host_key()).items()}))"],
                          env=env, capture_output=True, text=True, check=True)
    return {kind: Path(path) for kind, path in json.loads(done.stdout).items()}


# --- 1. The warm host's folder, socket and files --------------------------------------------------------------

PLANT = textwrap.dedent("""
    import os, sys
    folder = sys.argv[1]
    os.makedirs(folder + "/stages", exist_ok=True)
    os.chmod(folder, 0o777)
    marker = sys.argv[2]
    with open(folder + "/stages/warm.py", "w") as handle:  # beside where the owner's spawn launcher would go
        handle.write(f"open({marker!r}, 'w').write('ran as ' + str(__import__('os').getuid()))\\n")
    with open(folder + "/stages/__init__.py", "w") as handle:
        handle.write("")
""")


@pytest.mark.heavy  # a cold run as well: ~3 s
def test_a_host_folder_another_account_made_first_is_refused_and_the_caller_runs_cold(folder, other):
    attack = other.folder()
    temporary = Path(tempfile.mkdtemp(prefix="papers-tmp-"))
    temporary.chmod(0o1777)  # a /tmp of the test's own, sticky and world-writable like the real one
    squatted = temporary / f"papers-warm-{os.geteuid()}"
    marker = attack / "marker"
    try:
        planted = other.python(PLANT, str(squatted), str(marker))
        assert planted.returncode == 0, planted.stderr
        env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"} | {"TMPDIR": str(temporary)}
        for _ in range(2):  # a second caller would have found a host the first one started
            done = probe(folder, "facts", env=env)
            assert done.returncode == 0, done.stderr
            assert json.loads(done.stdout)["warm"] is False
            assert f"warm host off: {squatted} belongs to uid {other.uid}, not to this user" in done.stderr
        assert not marker.exists(), "the other account's code ran as the owner"
        assert sorted(p.name for p in squatted.iterdir()) == ["stages"], "the owner created files in a squatted folder"
    finally:
        shutil.rmtree(temporary, ignore_errors=True)
        shutil.rmtree(attack, ignore_errors=True)


def test_a_host_folder_that_is_a_symlink_or_open_to_others_is_refused(folder, tmp_path):
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    (runtime / "elsewhere").mkdir(mode=0o700)
    (runtime / "papers-warm").symlink_to(runtime / "elsewhere")
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime)}
    done = probe(folder, "facts", env=env)
    assert json.loads(done.stdout)["warm"] is False and "is a symbolic link" in done.stderr, done.stderr
    (runtime / "papers-warm").unlink()
    (runtime / "papers-warm").mkdir(mode=0o700)
    (runtime / "papers-warm").chmod(0o755)
    done = probe(folder, "facts", env=env)
    assert json.loads(done.stdout)["warm"] is False and "has mode 0755" in done.stderr, done.stderr
    assert list((runtime / "elsewhere").iterdir()) == []


LISTEN = textwrap.dedent("""
    import os, socket, sys, time
    path = sys.argv[1]
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    os.chmod(path, 0o777)
    server.listen(1)
    print("listening", flush=True)
    server.settimeout(60)
    connection, _ = server.accept()
    connection.settimeout(5)
    received = b""
    try:
        while chunk := connection.recv(65536):
            received += chunk
    except OSError:
        pass
    print(len(received), flush=True)
""")


def test_a_socket_served_by_another_account_receives_nothing(folder, tmp_path, other):
    """The other account's listener, moved into the owner's folder (as it could where the folder was not
    checked): the caller sees a peer of another uid and sends it nothing, environment and terminal included."""
    env = own_runtime_folder()
    where = paths_for(env)
    where["sock"].parent.mkdir(mode=0o700)
    attack = other.folder()
    try:
        listener = other.popen(LISTEN, str(attack / "s"))
        assert listener.stdout.readline().strip() == "listening", listener.stderr.read()
        os.rename(attack / "s", where["sock"])
        done = probe(folder, "facts", env={**env, "SECRET_TOKEN": "do-not-leak"})
        assert json.loads(done.stdout)["warm"] is False
        assert f"is served by uid {other.uid}" in done.stderr and "refused" in done.stderr, done.stderr
        received, _ = listener.communicate(timeout=30)
        assert received.splitlines()[-1] == "0", f"the other account received {received.splitlines()[-1]} bytes"
    finally:
        shutil.rmtree(attack, ignore_errors=True)


CALL_HOST = textwrap.dedent("""
    import json, socket, struct, sys
    connection = socket.socket(socket.AF_UNIX)
    connection.connect(sys.argv[1])
    request = {"module": "probe", "args": ["write", sys.argv[2]], "cwd": sys.argv[3], "env": {}, "pid": 1, "umask": 0,
               "fds": [0, 1, 2], "spawn": None, "limits": {}}
    connection.settimeout(10)
    try:
        body = json.dumps(request).encode()  # framed as tasks/core/messages.py frames it (this python has no project)
        socket.send_fds(connection, [struct.pack("!I", len(body)) + body], [0, 1, 2])
        print(repr(connection.recv(100)))
    except (BrokenPipeError, ConnectionResetError):  # closed on it before or after it wrote
        print(repr(b""))
""")


@pytest.mark.heavy  # starts a warm host of its own: 10-40 s
def test_the_host_serves_no_caller_of_another_account(folder, tmp_path, other):
    """With its folder opened on purpose, the host itself still refuses a caller whose uid is not its own."""
    env = own_runtime_folder()
    warm_probe(folder, "facts", env=env)
    where = paths_for(env)
    attack = other.folder()
    runtime = where["sock"].parent
    opened = (runtime.parent, runtime, folder.parent.parent, folder.parent, folder)
    modes = {path: path.stat().st_mode & 0o7777 for path in opened}
    try:
        for path in opened:
            path.chmod(0o711)
        where["sock"].chmod(0o777)
        called = other.python(CALL_HOST, str(where["sock"]), str(attack), str(folder))
        assert called.returncode == 0, called.stderr
        assert called.stdout.strip() == "b''", f"the host answered another account: {called.stdout}"
        assert list(attack.iterdir()) == [], "the host ran another account's request"
        assert f"refused a caller of uid {other.uid}" in where["log"].read_text()
    finally:
        for path, mode in modes.items():
            path.chmod(mode)
        shutil.rmtree(attack, ignore_errors=True)


@pytest.mark.heavy  # starts a warm host of its own: 10-40 s
def test_server_stop_kills_no_pid_a_planted_record_names_and_a_symlinked_record_is_replaced(folder, tmp_path):
    from stages.warm import stop_hosts

    env = own_runtime_folder()
    where = paths_for(env)
    where["sock"].parent.mkdir(mode=0o700)
    victim = subprocess.Popen(["sleep", "60"])
    precious = tmp_path / "precious"
    precious.write_text("keep me")
    try:
        # A record naming another process beside a socket that some other process serves.
        decoy = socket.socket(socket.AF_UNIX)
        decoy.bind(str(where["sock"].with_name("decoy.sock")))
        decoy.listen(1)
        where["sock"].with_name("decoy.json").write_text(json.dumps({"pid": victim.pid, "interpreter": [sys.prefix]}))
        where["sock"].with_name("decoy.json").chmod(0o600)
        where["json"].symlink_to(precious)
        first = probe(folder, "facts", env=env)  # starts the host, which writes its record
        assert first.returncode == 0, first.stderr
        pid = host_pid(env)
        assert precious.read_text() == "keep me" and not where["json"].is_symlink()
        assert json.loads(where["json"].read_text())["pid"] == pid
        saved = os.environ.copy()
        os.environ["XDG_RUNTIME_DIR"] = env["XDG_RUNTIME_DIR"]
        try:
            assert stop_hosts() == 1
        finally:
            os.environ.clear()
            os.environ.update(saved)
        gone, _ = psutil.wait_procs([psutil.Process(pid)], timeout=30)
        assert gone and victim.poll() is None, "stop_hosts signalled a process a planted record named"
        decoy.close()
    finally:
        victim.kill()


def test_a_host_runs_the_warm_code_of_the_callers_checkout_and_serves_no_other(tmp_path):
    copy = tmp_path / "checkout"
    (copy / "stages").mkdir(parents=True)
    (copy / "tasks" / "core").mkdir(parents=True)
    for relative in ("stages/__init__.py", "stages/warm.py", "stages/warm_host.py", "tasks/__init__.py",
                     "tasks/core/__init__.py", "tasks/core/private.py", "tasks/core/messages.py"):
        shutil.copy(ROOT / relative, copy / relative)
    keys = {}
    for checkout in (ROOT, copy):
        done = subprocess.run([sys.executable, "-P", "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                               "from stages.warm import host_key, CHECKOUT; print(host_key(), CHECKOUT)", str(checkout)],
                              capture_output=True, text=True, check=True)
        keys[checkout] = done.stdout.split()
    assert keys[ROOT][0] == keys[copy][0] and keys[copy][1] == str(copy)  # the same code: either may serve
    (copy / "stages" / "warm.py").write_text((copy / "stages" / "warm.py").read_text() + "\n# edited\n")
    edited = subprocess.run([sys.executable, "-P", "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                             "from stages.warm import host_key; print(host_key())", str(copy)],
                            capture_output=True, text=True, check=True)
    assert edited.stdout.strip() != keys[ROOT][0], "an edited warm host would serve callers of the old code"


# --- 4. The caller's limits, cores, RNG and job control ------------------------------------------------------

@pytest.mark.heavy  # starts a warm host of its own: 10-40 s
def test_a_warm_child_takes_the_callers_file_size_limit_as_a_cold_run_does(folder, tmp_path):
    env = own_runtime_folder()
    warm_probe(folder, "facts", env=env)

    def limit_files():  # `ulimit -S -f 40`: 40 KB, the soft limit only (the host key leaves it out)
        resource.setrlimit(resource.RLIMIT_FSIZE, (40 * 1024, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

    results = {}
    for mode, extra in (("warm", {}), ("cold", {"PAPERS_WARM": "0"})):
        out = tmp_path / mode
        out.mkdir()
        done = probe(folder, "write", str(out), env={**env, **extra}, preexec=limit_files)
        results[mode] = (done.returncode, json.loads(done.stdout))
        assert all(p.stat().st_size <= 40 * 1024 for p in out.iterdir())
    assert results["warm"][1]["warm"] is True and results["cold"][1]["warm"] is False
    assert results["warm"][0] == results["cold"][0] == 1
    assert results["warm"][1]["error"] == results["cold"][1]["error"] == 27  # EFBIG, file too large


@pytest.mark.heavy  # starts a warm host of its own: 10-40 s
def test_a_warm_child_runs_on_the_callers_cores_with_its_limits_and_fresh_rng(folder, tmp_path):
    env = own_runtime_folder()
    core = min(os.sched_getaffinity(0))

    def one_core():  # `taskset -c CORE` and `ulimit -S -n 200`
        os.sched_setaffinity(0, {core})
        resource.setrlimit(resource.RLIMIT_NOFILE, (200, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))

    first = warm_probe(folder, "facts", env=env, preexec=one_core)
    second = warm_probe(folder, "facts", env=env, preexec=one_core)
    cold = json.loads(probe(folder, "facts", env={**env, "PAPERS_WARM": "0"}, preexec=one_core).stdout)
    assert first["affinity"] == cold["affinity"] == [core]
    assert first["threads"] == cold["threads"] == 1
    assert first["nofile"][0] == cold["nofile"][0] == 200
    assert first["torch_seed"] != second["torch_seed"] and first["random"] != second["random"]


def test_import_time_variables_of_torch_and_hugging_face_key_the_host():
    base = dict(os.environ)
    keys = {host_key(base), host_key({**base, "HF_HOME": "/elsewhere"}), host_key({**base, "PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}),
            host_key({**base, "TRANSFORMERS_OFFLINE": "1"})}
    assert len(keys) == 4


@pytest.mark.heavy  # starts a warm host of its own: 10-40 s
def test_ctrl_z_stops_the_warm_child_and_fg_resumes_it_and_ps_names_it(folder, tmp_path):
    env = own_runtime_folder()
    warm_probe(folder, "facts", env=env)
    # A job of its own, as a shell starts it: the kernel does not stop a process group that is orphaned (whose
    # parents are all outside its session), as pytest's may be; the caller's parent is this test's process.
    caller = subprocess.Popen([sys.executable, "-m", "stages.warm", "probe", "wait"], cwd=folder, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, process_group=0)
    try:
        child = psutil.Process(int(caller.stdout.readline()))
        assert " ".join(child.cmdline()).startswith(f"python -m probe wait [warm, caller {caller.pid}]")
        assert catches(caller.pid, signal.SIGTSTP)  # once the caller has its handler: before, Ctrl-Z stops it alone
        caller.send_signal(signal.SIGTSTP)
        assert wait_for_status(child, psutil.STATUS_STOPPED) and wait_for_status(psutil.Process(caller.pid), psutil.STATUS_STOPPED)
        caller.send_signal(signal.SIGCONT)
        assert wait_for_status(child, psutil.STATUS_SLEEPING)
    finally:
        caller.terminate()
        caller.communicate(timeout=30)


def catches(pid: int, signum: int, timeout: float = 30) -> bool:
    """Whether process `pid` handles `signum` within `timeout` (its SigCgt mask in /proc)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        caught = next(line for line in Path(f"/proc/{pid}/status").read_text().splitlines() if line.startswith("SigCgt:"))
        if int(caught.split()[1], 16) >> (signum - 1) & 1:
            return True
        time.sleep(0.05)
    return False


def wait_for_status(process: psutil.Process, status: str, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.status() == status:
            return True
        time.sleep(0.05)
    return False


# --- 5. The host dies: its children die, the stage is FAILED everywhere ---------------------------------------

@pytest.mark.heavy  # starts a warm host of its own: 10-40 s
def test_a_child_dies_with_its_host_and_the_caller_fails(folder, tmp_path):
    env = own_runtime_folder()
    warm_probe(folder, "facts", env=env)
    caller = subprocess.Popen([sys.executable, "-m", "stages.warm", "probe", "wait"], cwd=folder, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    child = psutil.Process(int(caller.stdout.readline()))
    os.kill(host_pid(env), signal.SIGKILL)
    _, err = caller.communicate(timeout=30)
    assert caller.returncode == 1 and "the warm host ended while running `python -m probe`" in err
    gone, _ = psutil.wait_procs([child], timeout=10)
    assert gone, "the child ran on after its host died"


PAPER, DECLARED = next(iter(papers_by_size().items()))
FIRST, SECOND = DECLARED.stages[:2]  # the second stage is the one the host dies under


def test_a_stage_whose_host_dies_is_failed_in_mlflow_and_prefect_and_writes_nothing(repo_copy, prefect_server, tmp_path):
    from mlflow.tracking import MlflowClient

    env = {**stage_env(repo_copy), "XDG_RUNTIME_DIR": own_runtime_folder()["XDG_RUNTIME_DIR"]}
    generated = subprocess.run([sys.executable, "-m", "stages", PAPER, FIRST.name], cwd=repo_copy, env=env,
                               capture_output=True, text=True, timeout=300)  # cold: it starts the host
    assert generated.returncode == 0, generated.stderr
    host = host_pid(env)
    stage = subprocess.Popen([sys.executable, "-m", "stages", PAPER, SECOND.name], cwd=repo_copy, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    client = MlflowClient(tracking_uri=f"sqlite:///{repo_copy / 'mlflow' / 'mlflow.db'}")
    running = wait_for_running_run(client, stage)
    child = next(p for p in psutil.Process(host).children() if f"stages {PAPER} {SECOND.name}" in " ".join(p.cmdline()))
    child.suspend()  # frozen mid-stage, so the host dies while the stage is surely running
    os.kill(host, signal.SIGKILL)
    _, err = stage.communicate(timeout=120)
    assert stage.returncode == 1 and "the warm host ended" in err, err
    run = client.get_run(running)
    assert run.info.status == "FAILED" and run.data.tags["error"] == "the warm host running the stage ended while it ran"
    data = repo_copy / "data" / PAPER
    assert not (data / SECOND.outputs[0]).exists() or not any(data.glob("claims*"))
    from stages.flow_runs import STAGE_TAG, client_for, open_runs

    with client_for() as prefect:
        still_open = [r for r in open_runs(prefect, [STAGE_TAG, f"papers-pid:{socket.gethostname()}:{child.pid}"])
                      if r.state_type.value in ("RUNNING", "PENDING")]
    assert still_open == []


def wait_for_running_run(client, stage: subprocess.Popen, timeout: float = 120) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert stage.poll() is None, stage.communicate()
        experiment = client.get_experiment_by_name(PAPER)
        if experiment is not None:
            runs = client.search_runs([experiment.experiment_id],
                                      f"tags.stage = '{SECOND.name}' and attributes.status = 'RUNNING'")
            if runs:
                return runs[0].info.run_id
        time.sleep(0.1)
    raise AssertionError("the stage opened no MLflow run")


# --- 2. The Prefect API ----------------------------------------------------------------------------------------

PREFECT_CALLS = textwrap.dedent("""
    import base64, json, sys, urllib.error, urllib.request
    api, auth = sys.argv[1], sys.argv[2]
    calls = [("GET", "/health", None), ("POST", "/flow_runs/filter", {}), ("POST", "/deployments/filter", {}),
             ("POST", "/flows/", {"name": "other-accounts-flow"})]
    for header in ({}, {"Authorization": "Basic " + base64.b64encode(auth.encode()).decode()}):
        for method, path, body in calls:
            request = urllib.request.Request(api + path, method=method, headers={"Content-Type": "application/json", **header},
                                             data=None if body is None else json.dumps(body).encode())
            try:
                with urllib.request.urlopen(request, timeout=10) as response:
                    print(response.status)
            except urllib.error.HTTPError as error:
                print(error.code)
""")


def test_the_prefect_api_answers_another_account_401_without_the_owners_credential(prefect_server, other):
    from stages.environment import AUTH_FILE

    credential = Path(os.environ["PREFECT_HOME"]) / AUTH_FILE
    assert credential.stat().st_mode & 0o777 == 0o600 and Path(os.environ["PREFECT_HOME"]).stat().st_mode & 0o777 == 0o700
    guessed = other.python(PREFECT_CALLS, prefect_server, "papers:guessed")
    assert guessed.returncode == 0, guessed.stderr
    assert guessed.stdout.split() == ["200", "401", "401", "401"] * 2  # the health probe alone is open
    owner = subprocess.run([sys.executable, "-c", PREFECT_CALLS, prefect_server, os.environ["PREFECT_API_AUTH_STRING"]],
                           capture_output=True, text=True, timeout=60)
    assert owner.stdout.split()[4:] == ["200", "200", "200", "201"] or owner.stdout.split()[4:7] == ["200", "200", "200"]


def test_a_server_that_refuses_this_checkouts_credential_is_an_error_not_a_silent_401(prefect_server, monkeypatch):
    from stages import server

    monkeypatch.setenv("PREFECT_API_AUTH_STRING", "papers:not-the-credential")
    with pytest.raises(server.ServerError, match="refuses this checkout's credential"):
        server.start()


# --- Warm and cold stages give the same claims ----------------------------------------------------------------

TIMING_WORDS = ("second", "time", "wall", "speed", "elapsed", "duration", "per_s")


def comparable(value):
    """A claims document without provenance and timings: what a warm and a cold run must agree on. A claim about
    speed (its statement speaks of time) keeps what it checks, not what it measured."""
    if isinstance(value, dict) and any(word in value.get("statement", "").lower() for word in TIMING_WORDS + ("faster",)):
        return {k: value[k] for k in ("id", "statement", "paper_value", "threshold")}
    if isinstance(value, dict):
        return {k: comparable(v) for k, v in value.items() if k not in ("commit", "git_dirty", "mlflow_run_id")
                and not any(word in k.lower() for word in TIMING_WORDS)}
    if isinstance(value, list):
        return [comparable(v) for v in value]
    return value


@pytest.mark.parametrize("paper", list(papers_by_size())[:2])
def test_warm_and_cold_smoke_runs_give_identical_claims(paper, smoke_repo, tmp_path):
    from tests.conftest import smoke_copy

    cold = smoke_copy(tmp_path / "cold")
    env = {**stage_env(cold), "PAPERS_WARM": "0"}
    done = subprocess.run([sys.executable, "-m", "dvc", "repro", f"stages/{paper}/dvc.yaml"], cwd=cold, env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    warm = json.loads((smoke_repo / "data" / paper / "claims.json").read_text())
    assert comparable(json.loads((cold / "data" / paper / "claims.json").read_text())) == comparable(warm)
