"""The team profile's services, each a real server run by the account that calls `papers team up`, all on 127.0.0.1,
with their data under one private folder (`.team/` of the checkout, 0700):

| service | listens on | its data | who may use it |
|---|---|---|---|
| PostgreSQL | base port | postgres/ | password auth (scram-sha-256), one role per service |
| MLflow tracking server | base + 1 | mlflow/artifacts (served), runs in PostgreSQL | MLflow's basic-auth app: each member has an account |
| Prefect server | base + 2 | prefect/, state in PostgreSQL | the team's API auth string |
| Dask scheduler | base + 3 (dashboard base + 4) | dask/ | mutual TLS: a certificate the team CA signed |
| two Dask workers | random ports | dask/worker-N | (they connect out to the scheduler, TLS) |
| rclone WebDAV (the DVC remote) | base + 5 | dvc-remote/ | mutual TLS: a certificate the team CA signed |

Secrets live in `.team/secrets/` (0700, files 0600) and reach the servers by environment or by 0600 files
(PGPASSFILE), never on a command line, which `ps` shows to every account.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from tasks.core.private import private_folder, read_private, replace_file, secret

from . import team_tls
from .server import basic_header, is_up

HOST = "127.0.0.1"
DEFAULT_PORT = 5430  # PostgreSQL's; the others follow it (see Layout)
WORKERS = ("worker-1", "worker-2")
START_TIMEOUT_S = 240  # the first start migrates two empty databases (MLflow's and Prefect's): a minute on 2 cores
STOP_TIMEOUT_S = 20
DATABASES = ("mlflow", "prefect")  # one role and one database each; MLflow's user store is a second database
MLFLOW_USERS_DB = "mlflow_users"
POSTGRES_BIN = Path("/usr/lib/postgresql")  # Debian's layout: /usr/lib/postgresql/<major>/bin


class TeamError(RuntimeError):
    """A service could not be started or stopped; the message says which and why (the end of its log)."""


@dataclass(frozen=True)
class Layout:
    """The team folder of a checkout and the ports of its services."""
    root: Path  # the team folder (.team/)
    port: int  # PostgreSQL's; the rest follow

    @property
    def ports(self) -> dict[str, int]:
        return {"postgres": self.port, "mlflow": self.port + 1, "prefect": self.port + 2, "dask": self.port + 3,
                "dask-dashboard": self.port + 4, "dvc-remote": self.port + 5}

    def folder(self, *parts: str) -> Path:
        """A private folder under the team folder, created on first use (every level 0700)."""
        path = self.root
        for part in parts:
            path = private_folder(path / part)
        return path

    def secret(self, name: str) -> str:
        return secret(self.folder("secrets") / name)

    @property
    def mlflow_url(self) -> str:
        return f"http://{HOST}:{self.ports['mlflow']}"

    @property
    def prefect_url(self) -> str:
        return f"http://{HOST}:{self.ports['prefect']}/api"

    @property
    def dask_address(self) -> str:
        return f"tls://{HOST}:{self.ports['dask']}"

    @property
    def remote(self) -> Path:
        return self.folder("dvc-remote")


def load_layout(root: Path, port: int | None) -> Layout:
    """The layout recorded in `root`/team.json; a new one (with `port`, else DEFAULT_PORT) on the first `up`.
    A `port` that differs from the recorded one is refused: the members' bundles name the old ports."""
    private_folder(root, tighten=True)
    record = root / "team.json"
    if record.exists():
        recorded = json.loads(read_private(record))["port"]
        if port is not None and port != recorded:
            raise TeamError(f"--port {port}: this team folder's services use port {recorded} (members' bundles name "
                            f"it); `papers team down` and remove {root} to start over on another port")
        return Layout(root, recorded)
    layout = Layout(root, port or DEFAULT_PORT)
    replace_file(record, json.dumps({"port": layout.port}).encode())
    return layout


# --- processes -------------------------------------------------------------------------------------------------

def service_environment(extra: dict[str, str]) -> dict[str, str]:
    """A server's environment: ours without any client setting of the project's (PREFECT_*, MLFLOW_*, DASK_*,
    PAPERS_*), which would point it at another server, plus `extra`."""
    prefixes = ("PREFECT_", "MLFLOW_", "DASK_", "PAPERS_", "PG")
    env = {key: value for key, value in os.environ.items() if not key.startswith(prefixes)}
    env.update({"DO_NOT_TRACK": "true", "MLFLOW_DISABLE_TELEMETRY": "true", "PREFECT_SERVER_ANALYTICS_ENABLED": "false"})
    return {**env, **extra}


def pid_path(layout: Layout, name: str) -> Path:
    return layout.folder("run") / f"{name}.pid"


def log_path(layout: Layout, name: str) -> Path:
    return layout.folder("logs") / f"{name}.log"


def running_pid(layout: Layout, name: str) -> int | None:
    """The pid recorded for service `name` if that process still runs as ours; a stale record is removed."""
    import psutil

    path = pid_path(layout, name)
    try:
        pid = int(read_private(path).decode().split()[0])
        process = psutil.Process(pid)
        if process.uids().real == os.getuid() and process.status() != psutil.STATUS_ZOMBIE:
            return pid
    except (OSError, ValueError, IndexError, psutil.Error):
        pass
    path.unlink(missing_ok=True)
    return None


def spawn(layout: Layout, name: str, command: list[str], env: dict[str, str], cwd: Path | None = None) -> int:
    """Start `command` in the background in a session of its own (so `down` stops it with its children), its output
    appended to logs/NAME.log, what it creates its owner's alone (umask 077); record its pid."""
    with open(log_path(layout, name), "ab") as log:
        process = subprocess.Popen(command, env=env, cwd=cwd or layout.root, stdin=subprocess.DEVNULL, stdout=log,
                                   stderr=subprocess.STDOUT, start_new_session=True, umask=0o077)
    replace_file(pid_path(layout, name), str(process.pid).encode())
    return process.pid


def stop_process(layout: Layout, name: str) -> bool:
    """SIGTERM to the service's session, SIGKILL after STOP_TIMEOUT_S; True if it ran."""
    import psutil

    pid = running_pid(layout, name)
    if pid is None:
        return False
    for sent in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sent)
        except ProcessLookupError:
            break
        try:
            psutil.Process(pid).wait(STOP_TIMEOUT_S)
            break
        except psutil.TimeoutExpired:
            continue
        except psutil.NoSuchProcess:
            break
    pid_path(layout, name).unlink(missing_ok=True)
    return True


def log_tail(layout: Layout, name: str, lines: int = 15) -> str:
    try:
        return "\n".join(log_path(layout, name).read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def wait_until(layout: Layout, name: str, check, timeout: float = START_TIMEOUT_S) -> None:
    """Wait for `check()` to hold; a service that exits or does not answer in time is a TeamError with its log."""
    deadline = time.monotonic() + timeout
    while not check():
        if running_pid(layout, name) is None:
            raise TeamError(f"{name} exited while starting; its log ({log_path(layout, name)}) ends:\n"
                            f"{log_tail(layout, name)}")
        if time.monotonic() > deadline:
            raise TeamError(f"{name} did not answer within {timeout:.0f} s; its log ends:\n{log_tail(layout, name)}")
        time.sleep(0.5)


def listens(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(1)
        return probe.connect_ex((HOST, port)) == 0


def http_status(url: str, headers: dict[str, str] | None = None) -> int | None:
    """The HTTP status of a GET, None when nothing answers."""
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=5) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code
    except OSError:
        return None


# --- PostgreSQL --------------------------------------------------------------------------------------------------

def postgres_bin(tool: str) -> str:
    """A PostgreSQL server program from Debian's package (`apt-get install postgresql`), newest major first."""
    for major in sorted(POSTGRES_BIN.glob("*/bin"), key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
                        reverse=True):
        if (major / tool).exists():
            return str(major / tool)
    found = shutil.which(tool)
    if found is None:
        raise TeamError(f"PostgreSQL's {tool} is not installed (Debian: `apt-get install postgresql`)")
    return found


def pgpass(layout: Layout) -> Path:
    """The 0600 password file (PGPASSFILE) every client of the team's PostgreSQL reads: libpq (MLflow) and
    asyncpg (Prefect) both, so no password is on a command line or in a URL."""
    path = layout.folder("secrets") / "pgpass"
    lines = [f"{HOST}:{layout.port}:*:{role}:{layout.secret(f'postgres-{role}')}" for role in ("team", *DATABASES)]
    replace_file(path, ("\n".join(lines) + "\n").encode())
    return path


def postgres_up(layout: Layout) -> bool:
    done = subprocess.run([postgres_bin("pg_isready"), "-h", HOST, "-p", str(layout.port), "-q"], capture_output=True)
    return done.returncode == 0


def start_postgres(layout: Layout) -> None:
    """A cluster of our own under postgres/data (initdb once): password auth (scram-sha-256) for every connection,
    TCP on 127.0.0.1 only, its socket in a private folder; then a role and a database per service."""
    if os.geteuid() == 0:
        raise TeamError("PostgreSQL refuses to run as root: run `papers team up` as an ordinary account "
                        "(on a real host, the account that runs the team's services)")
    if postgres_up(layout):
        return
    data = layout.root / "postgres"
    password_file = layout.folder("secrets") / "postgres-team"
    layout.secret("postgres-team")
    if not (data / "PG_VERSION").exists():
        done = subprocess.run([postgres_bin("initdb"), "-D", str(data), "-U", "team", "-E", "UTF8", "--no-locale",
                               "--auth=scram-sha-256", f"--pwfile={password_file}"],
                              capture_output=True, text=True, env=service_environment({}))
        if done.returncode != 0:
            raise TeamError(f"initdb failed: {(done.stdout + done.stderr).strip()[-800:]}")
    options = (f"-c listen_addresses={HOST} -p {layout.port} -k {layout.folder('postgres-socket')} "
               f"-c password_encryption=scram-sha-256")
    done = subprocess.run([postgres_bin("pg_ctl"), "-D", str(data), "-l", str(log_path(layout, "postgres")), "-o",
                           options, "-w", "-t", "120", "start"], capture_output=True, text=True,
                          env=service_environment({}))
    if done.returncode != 0:
        raise TeamError(f"PostgreSQL did not start: {done.stdout.strip()[-300:]}\n{log_tail(layout, 'postgres')}")
    create_databases(layout)


def create_databases(layout: Layout) -> None:
    """A login role per service with its own password, owning its database (and MLflow's user store)."""
    import psycopg2

    owners = {"mlflow": "mlflow", "prefect": "prefect", MLFLOW_USERS_DB: "mlflow"}
    connection = psycopg2.connect(host=HOST, port=layout.port, user="team", dbname="postgres",
                                  password=layout.secret("postgres-team"))
    connection.autocommit = True
    try:
        with connection.cursor() as cursor:
            for role in DATABASES:
                cursor.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,))
                verb = "ALTER" if cursor.fetchone() else "CREATE"
                cursor.execute(f"{verb} ROLE {role} LOGIN PASSWORD %s", (layout.secret(f"postgres-{role}"),))
            for database, owner in owners.items():
                cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", (database,))
                if cursor.fetchone() is None:
                    cursor.execute(f"CREATE DATABASE {database} OWNER {owner}")
    finally:
        connection.close()


def stop_postgres(layout: Layout) -> bool:
    data = layout.root / "postgres"
    if not (data / "postmaster.pid").exists():
        return False
    subprocess.run([postgres_bin("pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"], capture_output=True,
                   env=service_environment({}))
    return True


# --- MLflow ------------------------------------------------------------------------------------------------------

ADMIN_SECRET = "mlflow-admin"


def mlflow_admin(layout: Layout) -> tuple[str, str]:
    """The MLflow server's admin account: the team host's login name, its password in secrets/mlflow-admin."""
    import pwd

    return pwd.getpwuid(os.geteuid()).pw_name, layout.secret(ADMIN_SECRET)


def mlflow_up(layout: Layout) -> bool:
    return http_status(f"{layout.mlflow_url}/health") == 200


def start_mlflow(layout: Layout) -> None:
    """`mlflow server` on PostgreSQL with MLflow's basic-auth app: a member reads every run (default permission
    READ) and writes only in experiments they may edit; it serves the artifact store (mlflow/artifacts), so every
    member's runs keep their artifacts there and not in a checkout."""
    if mlflow_up(layout):
        return
    folder = layout.folder("mlflow")
    config = folder / "auth.ini"
    replace_file(config, ("[mlflow]\n"
                          "default_permission = READ\n"
                          f"database_uri = postgresql+psycopg2://mlflow@{HOST}:{layout.port}/{MLFLOW_USERS_DB}\n").encode())
    admin, password = mlflow_admin(layout)
    env = service_environment({
        "PGPASSFILE": str(pgpass(layout)),
        "MLFLOW_BACKEND_STORE_URI": f"postgresql+psycopg2://mlflow@{HOST}:{layout.port}/mlflow",
        "MLFLOW_ARTIFACTS_DESTINATION": str(layout.folder("mlflow", "artifacts")),
        "MLFLOW_AUTH_CONFIG_PATH": str(config), "MLFLOW_AUTH_ADMIN_USERNAME": admin,
        "MLFLOW_AUTH_ADMIN_PASSWORD": password, "MLFLOW_FLASK_SERVER_SECRET_KEY": layout.secret("mlflow-flask"),
        "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"})
    command = [str(Path(sys.executable).with_name("mlflow")), "server", "--app-name", "basic-auth", "--serve-artifacts",
               "--host", HOST, "--port", str(layout.ports["mlflow"]), "--workers", "1"]
    spawn(layout, "mlflow", command, env)
    wait_until(layout, "mlflow", lambda: mlflow_up(layout))


def mlflow_request(layout: Layout, method: str, path: str, body: dict | None, user: str, password: str) -> dict:
    """One call of the MLflow server's REST API as `user`; an HTTP error is a TeamError with MLflow's message."""
    request = urllib.request.Request(f"{layout.mlflow_url}{path}", method=method,
                                     data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Content-Type": "application/json", **basic_header(f"{user}:{password}")})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        raise TeamError(f"MLflow {method} {path}: HTTP {error.code} {error.read()[:300].decode(errors='replace')}") from None


def add_mlflow_user(layout: Layout, name: str, password: str) -> None:
    admin, admin_password = mlflow_admin(layout)
    if name == admin:
        return
    try:
        mlflow_request(layout, "GET", f"/api/2.0/mlflow/users/get?username={name}", None, admin, admin_password)
    except TeamError:
        mlflow_request(layout, "POST", "/api/2.0/mlflow/users/create", {"username": name, "password": password},
                       admin, admin_password)


# --- Prefect -----------------------------------------------------------------------------------------------------

def start_prefect(layout: Layout) -> None:
    """`prefect server start` on PostgreSQL, locked with the team's API auth string (secrets/prefect-auth)."""
    if is_up(layout.prefect_url):
        return
    env = service_environment({
        "PGPASSFILE": str(pgpass(layout)), "PREFECT_HOME": str(layout.folder("prefect")),
        "PREFECT_API_DATABASE_CONNECTION_URL": f"postgresql+asyncpg://prefect@{HOST}:{layout.port}/prefect",
        "PREFECT_SERVER_API_AUTH_STRING": prefect_auth(layout)})
    command = [str(Path(sys.executable).with_name("prefect")), "server", "start", "--host", HOST,
               "--port", str(layout.ports["prefect"])]
    spawn(layout, "prefect", command, env)
    wait_until(layout, "prefect", lambda: is_up(layout.prefect_url))


def prefect_auth(layout: Layout) -> str:
    return "team:" + layout.secret("prefect-auth")


# --- Dask --------------------------------------------------------------------------------------------------------

def tls_folder(layout: Layout) -> Path:
    folder = layout.folder("tls")
    team_tls.ensure_ca(folder)
    return folder


def host_identity(layout: Layout) -> tuple[Path, Path, Path]:
    """(CA, certificate, key) with which the team host itself asks its TLS services whether they are up."""
    folder = tls_folder(layout)
    return (folder / "ca.pem", *team_tls.issue(folder, folder, "team-host-client"))


def tls_options(layout: Layout, name: str) -> list[str]:
    folder = tls_folder(layout)
    certificate, key = team_tls.issue(folder, folder, name)
    return ["--tls-ca-file", str(folder / "ca.pem"), "--tls-cert", str(certificate), "--tls-key", str(key)]


DASK_ENCRYPTION = {"DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION": "True"}


def start_dask(layout: Layout, checkout: Path) -> None:
    """A Dask scheduler and two workers (as if on two machines: each its own name and local folder), all on TLS
    with certificates from the team CA. They run in the checkout with it on their import path, so the flows'
    tasks unpickle there; on real hosts the scheduler's and each worker's machine has a checkout of the same
    commit as the members who submit."""
    dask = str(Path(sys.executable).with_name("dask"))
    if running_pid(layout, "dask-scheduler") is None:
        command = [dask, "scheduler", "--protocol", "tls", "--host", HOST, "--port", str(layout.ports["dask"]),
                   "--dashboard-address", f"{HOST}:{layout.ports['dask-dashboard']}", *tls_options(layout, "scheduler")]
        # The scheduler unpickles the task graphs too, so it imports the flows' modules like the workers.
        spawn(layout, "dask-scheduler", command, service_environment({**DASK_ENCRYPTION, "PYTHONPATH": str(checkout)}),
              cwd=checkout)
        wait_until(layout, "dask-scheduler", lambda: listens(layout.ports["dask"]))
    for worker in WORKERS:
        if running_pid(layout, f"dask-{worker}") is not None:
            continue
        command = [dask, "worker", layout.dask_address, "--name", worker, "--nthreads", "1", "--nworkers", "1",
                   "--host", HOST, "--no-dashboard", "--local-directory", str(layout.folder("dask", worker)),
                   *tls_options(layout, worker)]
        env = service_environment({**DASK_ENCRYPTION, "PYTHONPATH": str(checkout)})
        spawn(layout, f"dask-{worker}", command, env, cwd=checkout)
    wait_until(layout, "dask-scheduler", lambda: len(dask_workers(layout)) >= len(WORKERS))


def dask_workers(layout: Layout) -> list[str]:
    """The names of the workers the scheduler knows, asked over TLS with the team host's own client certificate."""
    from distributed import Client
    from distributed.security import Security

    ca, certificate, key = host_identity(layout)
    security = Security(tls_ca_file=str(ca), tls_client_cert=str(certificate), tls_client_key=str(key),
                        require_encryption=True)
    try:
        with Client(layout.dask_address, security=security, timeout=5) as client:
            return sorted(w["name"] for w in client.scheduler_info(n_workers=-1)["workers"].values())
    except (OSError, TimeoutError):
        return []


# --- the DVC remote: WebDAV over mutual TLS ---------------------------------------------------------------------

RCLONE = "rclone"
DAV_ROOT = "dvc"  # the remote's folder inside the served one (WebDAV creates no parents: it exists before the server)


def dav_url(layout: Layout) -> str:
    return f"webdavs://{HOST}:{layout.ports['dvc-remote']}/{DAV_ROOT}"


def dav_up(layout: Layout) -> bool:
    """The remote answers a TLS handshake with a certificate of the team CA (asked with the team host's own client
    certificate: a client without one is refused)."""
    import ssl

    ca, certificate, key = host_identity(layout)
    context = ssl.create_default_context(cafile=str(ca))
    context.load_cert_chain(str(certificate), str(key))
    try:
        with socket.create_connection((HOST, layout.ports["dvc-remote"]), timeout=2) as raw, \
                context.wrap_socket(raw, server_hostname=HOST):
            return True
    except (OSError, ssl.SSLError):
        return False


def start_dav(layout: Layout) -> None:
    """`rclone serve webdav` (Debian's rclone) serving remote/ and nothing else: a member reaches no file of the
    account that runs it outside that folder (rclone confines every path to its root and does not follow or make
    symbolic links), without the root a chrooted sshd would need. Both sides check certificates against the team
    CA: members prove who they are with the certificate of their bundle, and the remote proves it is the team's,
    so a process that took the port while the remote was down gets no data and serves none."""
    if shutil.which(RCLONE) is None:
        raise TeamError("rclone is not installed (Debian: `apt-get install rclone`): it serves the team's DVC remote")
    if running_pid(layout, "dvc-remote") is not None:
        return
    folder = tls_folder(layout)
    certificate, key = team_tls.issue(folder, folder, "dvc-remote")
    layout.folder("dvc-remote", DAV_ROOT)
    config = layout.folder("dvc-remote-config") / "rclone.conf"  # empty: never the account's own rclone remotes
    if not config.exists():
        replace_file(config, b"")
    command = [RCLONE, "serve", "webdav", str(layout.remote), "--config", str(config),
               "--addr", f"{HOST}:{layout.ports['dvc-remote']}", "--cert", str(certificate), "--key", str(key),
               "--client-ca", str(folder / "ca.pem"), "--log-level", "NOTICE"]
    spawn(layout, "dvc-remote", command, service_environment({}))
    wait_until(layout, "dvc-remote", lambda: dav_up(layout))


# --- all of them -------------------------------------------------------------------------------------------------

SERVICES = ("postgres", "mlflow", "prefect", "dask-scheduler", *(f"dask-{w}" for w in WORKERS), "dvc-remote")


def up(layout: Layout, checkout: Path, say) -> None:
    for name, start in (("PostgreSQL", start_postgres), ("MLflow", start_mlflow), ("Prefect", start_prefect),
                        ("Dask", lambda lay: start_dask(lay, checkout)), ("the DVC remote", start_dav)):
        say(f"starting {name} ...")
        start(layout)


def down(layout: Layout) -> list[str]:
    """Stop every service (the reverse order of `up`); the names of those that ran."""
    stopped = [name for name in reversed(SERVICES[1:]) if stop_process(layout, name)]
    return stopped + (["postgres"] if stop_postgres(layout) else [])


def status(layout: Layout) -> dict[str, str]:
    """Each service's state in a few words: up (with what shows it) or down."""
    admin, password = mlflow_admin(layout)
    mlflow_login = http_status(f"{layout.mlflow_url}/api/2.0/mlflow/experiments/search?max_results=1",
                               basic_header(f"{admin}:{password}")) if mlflow_up(layout) else None
    prefect_login = http_status(f"{layout.prefect_url}/admin/version", basic_header(prefect_auth(layout))) \
        if is_up(layout.prefect_url) else None
    dask = listens(layout.ports["dask"])
    workers = dask_workers(layout) if dask else []
    return {
        "postgres": f"up on {HOST}:{layout.port}" if postgres_up(layout) else "down",
        "mlflow": f"up at {layout.mlflow_url} (admin login: HTTP {mlflow_login})" if mlflow_login else "down",
        "prefect": f"up at {layout.prefect_url} (auth string: HTTP {prefect_login})" if prefect_login else "down",
        "dask": f"up at {layout.dask_address}, workers: {', '.join(workers) or 'none'}" if dask else "down",
        "dvc-remote": f"up at {dav_url(layout)} (mutual TLS; files in {layout.remote})" if dav_up(layout) else "down",
    }
