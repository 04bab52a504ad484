"""Dask and Flower on a machine shared with another local account (papers-other, tests/platform/second_user.py):
the servers our stages start on 127.0.0.1 refuse that account's plaintext connections, Dask refuses a TLS client
without the cluster's certificate, and both still work over TLS. Flower's SuperLink does not authenticate its TLS
clients (tasks/federated/flower_deployment.py says what that leaves open), so there is no such refusal to show."""
from __future__ import annotations

import json
import os
import socket
import ssl
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, stage_env
from tests.platform.second_user import other  # noqa: F401

DASK_FLOW = r"""
import sys

from prefect import flow, task
from prefect.context import get_run_context

from flows.runtime import task_runner


@task
def square(x: int) -> int:
    return x * x


@flow(task_runner=task_runner())
def squares(n: int) -> list[int]:
    print(get_run_context().task_runner.client.scheduler.address, flush=True)
    sys.stdin.readline()  # the test attacks the scheduler meanwhile
    return [future.result() for future in square.map(range(n))]


if __name__ == "__main__":
    print(squares(4), flush=True)
"""

DASK_ATTACK = r"""
import json, socket, ssl, sys

host, port = sys.argv[1].split("://")[-1].rsplit(":", 1)
frame = b"\x82\xa2op\xa8identity\xa5reply\xc3"  # msgpack {"op": "identity", "reply": True}
message = (1).to_bytes(8, "little") + len(frame).to_bytes(8, "little") + frame  # Dask's TCP framing
said = {}
with socket.create_connection((host, int(port)), timeout=10) as plain:
    plain.sendall(message)
    try:
        said["plain"] = plain.recv(4096).hex()
    except OSError:  # reset: no reply either
        said["plain"] = ""
context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
context.check_hostname, context.verify_mode = False, ssl.CERT_NONE  # trust anything: only our own cert is missing
try:
    with socket.create_connection((host, int(port)), timeout=10) as raw, context.wrap_socket(raw) as tls:
        tls.sendall(message)
        said["tls"] = "answered " + tls.recv(4096).hex()
except (ssl.SSLError, ConnectionResetError, BrokenPipeError) as error:  # the alert "certificate required", or EOF
    said["tls"] = f"refused: {type(error).__name__}: {error}"
print(json.dumps(said))
"""

TLS_ALERT = 0x15  # a TLS record of type alert: what a TLS server may send back to bytes that are not TLS


def no_service(reply_hex: str) -> bool:
    """A plain connection's reply: nothing (closed or reset) or a TLS alert; never a Dask or HTTP/2 frame."""
    return not reply_hex or bytes.fromhex(reply_hex)[0] == TLS_ALERT


def test_the_local_dask_cluster_refuses_another_account_and_still_computes(tmp_path, other, prefect_server):
    script = tmp_path / "squares.py"  # a file: Dask's worker processes are spawned and re-import __main__
    script.write_text(DASK_FLOW)
    env = {**stage_env(ROOT), "PAPERS_TASK_RUNNER": "dask", "PAPERS_MAX_WORKERS": "1", "PYTHONPATH": str(ROOT)}
    run = subprocess.Popen([sys.executable, str(script)], cwd=tmp_path, env=env, stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        address = run.stdout.readline().strip()
        assert address.startswith("tls://127.0.0.1:"), (address, run.stderr.read() if not address else "")
        attack = other.python(DASK_ATTACK, address)
        run.stdin.write("\n")
        run.stdin.flush()
        out, err = run.communicate(timeout=120)
    finally:
        run.kill()
    assert attack.returncode == 0, attack.stderr
    said = json.loads(attack.stdout)
    assert no_service(said["plain"]), said
    assert said["tls"].startswith("refused"), said
    assert run.returncode == 0, err[-3000:]
    assert out.strip().splitlines()[-1] == "[0, 1, 4, 9]", out


def test_the_dask_runner_survives_prefects_copies(monkeypatch):
    """Prefect runs each flow on task_runner.duplicate(), and pickles flows (with their runner) for subprocesses."""
    import pickle

    from flows.runtime import task_runner

    monkeypatch.setenv("PAPERS_TASK_RUNNER", "dask")
    monkeypatch.delenv("PAPERS_DASK_ADDRESS", raising=False)
    runner = task_runner()
    assert runner.cluster_kwargs["security"] is True and runner.cluster_kwargs["protocol"] == "tls"
    assert runner.duplicate() == runner and pickle.loads(pickle.dumps(runner)) == runner


HTTP2_PLAINTEXT = r"""
import socket, sys

preface = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes.fromhex("000000040000000000")  # + an empty SETTINGS frame
for address in sys.argv[1:]:
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as plain:
        plain.sendall(preface)
        try:
            print(plain.recv(4096).hex())  # a plaintext gRPC server answers with its own SETTINGS frame
        except OSError:  # reset: no reply either
            print("")
"""

READ_FILES = r"""
import sys

for path in sys.argv[1:]:
    try:
        open(path, "rb").read()
        print("read")
    except OSError as error:
        print(type(error).__name__)
"""


def wait_for_verified_tls(address: str, ca: Path, timeout_s: float = 60) -> str:
    """Until `address` completes a TLS handshake that verifies its certificate against `ca` for 127.0.0.1 (the
    SuperLink is up); the HTTP/2 protocol it agreed, as gRPC clients ask for."""
    host, port = address.rsplit(":", 1)
    context = ssl.create_default_context(cafile=str(ca))
    context.set_alpn_protocols(["h2"])
    end = time.monotonic() + timeout_s
    while True:
        try:
            with socket.create_connection((host, int(port)), timeout=5) as raw, \
                    context.wrap_socket(raw, server_hostname=host) as tls:
                return tls.selected_alpn_protocol()
        except ConnectionRefusedError:
            if time.monotonic() > end:
                raise
            time.sleep(0.2)


def online_nodes(deployment, timeout_s: float = 60) -> list[dict]:
    """`flwr supernode ls` through the Control API (the CLI's TLS connection from config.toml), until a SuperNode
    is online (it reached the Fleet API over TLS)."""
    command = [str(Path(sys.executable).parent / "flwr"), "supernode", "ls", "local", "--format", "json"]
    end = time.monotonic() + timeout_s
    while True:
        done = subprocess.run(command, env=deployment.env, capture_output=True, text=True, timeout=timeout_s)
        assert done.returncode == 0, done.stdout + done.stderr
        nodes = [node for node in json.loads(done.stdout)["nodes"] if node["status"] == "online"]
        if nodes or time.monotonic() > end:
            return nodes
        time.sleep(0.5)


@pytest.mark.heavy  # starts a Flower SuperLink and SuperNode: ~8 s
def test_the_flower_deployment_serves_tls_only_and_keeps_its_keys_private(tmp_path, other):
    """The full run over TLS (ServerApp and ClientApps) is the federated paper's Flower test (slow)."""
    from tasks.federated.flower_deployment import local_deployment

    with local_deployment(tmp_path / "deployment", [{"client": 0, "data": "unused.npz"}]) as deployment:
        for address in (deployment.control, deployment.fleet):
            assert wait_for_verified_tls(address, deployment.tls.ca) == "h2", address
        assert len(online_nodes(deployment)) == 1, deployment.logs()
        plaintext = other.python(HTTP2_PLAINTEXT, deployment.control, deployment.fleet)
        files = [deployment.tls.ca, deployment.tls.cert, deployment.tls.key]
        reading = other.python(READ_FILES, *map(str, files))
    assert plaintext.returncode == 0, plaintext.stderr
    replies = plaintext.stdout.split("\n")[:2]
    assert all(no_service(reply) for reply in replies), replies
    assert reading.stdout.split() == ["PermissionError"] * 3, reading.stdout + reading.stderr
    for path in files:
        info = path.stat()
        assert stat.S_IMODE(info.st_mode) == 0o600 and info.st_uid == os.geteuid(), path
    assert stat.S_IMODE(deployment.tls.ca.parent.stat().st_mode) == 0o700
    config = (deployment.home / "flwr" / "config.toml").read_text()
    assert "insecure" not in config and f'root-certificates = "{deployment.tls.ca}"' in config

