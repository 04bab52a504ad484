"""Flower's deployment runtime on this machine (flwr 1.32.1, pinned: its CLI and app layout change across 1.x):
a SuperLink and one SuperNode per client as separate processes on 127.0.0.1, each API on a free port chosen at
run time (parallel runs cannot collide), a private FLWR_HOME holding the SuperLink connection that `flwr run`
reads, and no Ray. Apps are submitted with `flwr run APP_DIR CONNECTION`; the SuperLink and SuperNodes start the
ServerApp and ClientApps as their own subprocesses (isolation "subprocess"), which inherit this environment
(PYTHONPATH included) so an app can import the project's code. Runtime dependency installation is off: the
environment already holds everything, and there is no network.

The Fleet and Control APIs speak TLS with per-run certificates (tasks/federated/certificates.py): no plaintext
connection is served, and our SuperNodes and `flwr` trust only this run's CA. TLS does not authenticate clients
here (flwr's gRPC servers set require_client_auth=False; Control API accounts are an enterprise feature), so
another local account that skips verification can still start a run (its ServerApp would run as us) or join as a
SuperNode; the ServerAppIo and ClientAppIo APIs stay plaintext on loopback."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from .certificates import ServerCertificates, loopback_certificates

CONNECTION = "local"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def toml_value(value) -> str:
    """A node/run config value as Flower's `key=value` parser reads it (TOML scalars)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return "'" + str(value).replace("'", "") + "'"


def config_arg(values: dict) -> str:
    return " ".join(f"{key}={toml_value(value)}" for key, value in values.items())


@dataclass(frozen=True)
class Deployment:
    home: Path  # FLWR_HOME and the processes' logs
    control: str  # the Control API address `flwr run` talks to
    fleet: str  # the Fleet API address SuperNodes talk to
    tls: ServerCertificates  # the SuperLink's, and the CA its clients trust
    env: dict

    def submit(self, app_dir: Path, run_config: dict, timeout_s: float = 60) -> int:
        """`flwr run APP_DIR local --run-config ...`: builds the app's FAB, starts a run on the SuperLink, and
        returns its run id."""
        command = [_tool("flwr"), "run", str(app_dir), CONNECTION, "--run-config", config_arg(run_config),
                   "--format", "json"]
        done = subprocess.run(command, env=self.env, capture_output=True, text=True, timeout=timeout_s)
        if done.returncode != 0:
            raise RuntimeError(f"flwr run failed ({done.returncode}): {done.stdout[-2000:]} {done.stderr[-2000:]}")
        return int(json.loads(done.stdout[done.stdout.index("{"):])["run-id"])

    def run_log(self, run_id: int, timeout_s: float = 30) -> str:
        """The run's ServerApp log, as `flwr log RUN_ID local --show` prints it."""
        done = subprocess.run([_tool("flwr"), "log", str(run_id), CONNECTION, "--show"], env=self.env,
                              capture_output=True, text=True, timeout=timeout_s)
        return done.stdout[-6000:] + done.stderr[-2000:]

    def logs(self) -> str:
        return "\n".join(f"== {p.name}\n{p.read_text(errors='replace')[-3000:]}" for p in sorted(self.home.glob("*.log")))


def _tool(name: str) -> str:
    """A Flower console script of this interpreter's environment."""
    return str(Path(sys.executable).parent / name)


def _start(command: list[str], log: Path, env: dict) -> subprocess.Popen:
    with log.open("w") as out:  # the child keeps its own copy of the descriptor
        return subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)


def _stop(process: subprocess.Popen) -> None:
    """End the process and the subprocesses it started (its own session), TERM first, then KILL."""
    import signal

    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=5)
    except ProcessLookupError:
        pass


def _server_tls_args(tls: ServerCertificates) -> list[str]:
    """The SuperLink's Fleet and Control APIs over TLS (flwr 1.32.1 needs all three files, or --insecure)."""
    return ["--ssl-ca-certfile", str(tls.ca), "--ssl-certfile", str(tls.cert), "--ssl-keyfile", str(tls.key)]


@contextmanager
def local_deployment(home: Path, node_configs: list[dict], env: dict | None = None):
    """A SuperLink and len(node_configs) SuperNodes (node i gets --node-config node_configs[i]); yields a
    Deployment, and stops every process it started on exit."""
    home = Path(home)
    home.mkdir(parents=True, exist_ok=True)
    serverappio, fleet, control = (f"127.0.0.1:{free_port()}" for _ in range(3))
    env = dict(os.environ if env is None else env)
    env |= {"FLWR_HOME": str(home / "flwr"), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
            "FLWR_TELEMETRY_ENABLED": "0", "PYTHONUNBUFFERED": "1"}
    tls = loopback_certificates(home / "tls")
    (home / "flwr").mkdir(exist_ok=True)
    (home / "flwr" / "config.toml").write_text(
        f'[superlink]\ndefault = "{CONNECTION}"\n\n[superlink.{CONNECTION}]\naddress = "{control}"\n'
        f'root-certificates = {json.dumps(str(tls.ca))}\n')  # a JSON string is a valid TOML basic string
    with ExitStack() as stack:
        link = _start([_tool("flower-superlink"), *_server_tls_args(tls), "--serverappio-api-address", serverappio,
                       "--fleet-api-address", fleet, "--control-api-address", control,
                       "--disable-runtime-dependency-installation"], home / "superlink.log", env)
        stack.callback(_stop, link)
        for i, node_config in enumerate(node_configs):
            node = _start([_tool("flower-supernode"), "--root-certificates", str(tls.ca), "--superlink", fleet,
                           "--clientappio-api-address", f"127.0.0.1:{free_port()}",
                           "--node-config", config_arg(node_config)], home / f"supernode_{i}.log", env)
            stack.callback(_stop, node)
        yield Deployment(home, control, fleet, tls, env)


def wait_for(path: Path, timeout_s: float, poll_s: float = 0.1) -> None:
    """Until `path` exists (a run's result file); TimeoutError after timeout_s."""
    end = time.monotonic() + timeout_s
    while not path.exists():
        if time.monotonic() > end:
            raise TimeoutError(f"no {path} after {timeout_s:g} s")
        time.sleep(poll_s)
