"""`papers fedcdwa flower-job`: the files of one FedCDWA run on a real multi-machine Flower deployment (a SuperLink
the user runs, one SuperNode per client), written to a new folder:

    app/            the Flower App (pyproject.toml and fedcdwa_flower.py, as flower_app/); `flwr run` builds it
    server/         job.json (config, seed, counts) and test.npz: copy to the SuperLink's machine
    clients/        client_K.npz (train, validation and local test arrays): copy each to client K's machine
    flwr_home/      config.toml, the SuperLink connection `flwr run` reads (FLWR_HOME), and the CA if given
    RUN.md          the commands, with this job's paths and address

The address and the folder are checked before any work: the address is HOST:PORT (a host name, an IPv4 address
or a bracketed IPv6 address; port 1..65535); the folder is new or empty (--force writes into a non-empty one and
removes the client files a larger earlier job left), and no symbolic link is followed, at the folder or inside it:
every file is opened with O_NOFOLLOW."""
from __future__ import annotations

import io
import ipaddress
import json
import os
import re
from pathlib import Path

import numpy as np

from tasks.core.inputs import InputError, read_text

from .config import FedConfig
from .data import Federation

APP_FILES = ("pyproject.toml", "fedcdwa_flower.py")
CONNECTION = "fedcdwa"
FLEET_PORT = 9092  # flower-superlink's default Fleet API port (SuperNodes connect there)
PORT = re.compile(r"[0-9]{1,5}")
HOST_NAME = re.compile(r"(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*")


def check_address(address: str, option: str = "--superlink") -> str:
    """A SuperLink Control API address HOST:PORT, as `flwr run` takes it; refused otherwise."""
    refusal = InputError(f"{option}: must be HOST:PORT (a host name, an IPv4 address or [IPv6], port 1..65535), "
                         f"got {address!r}")
    host, colon, port = address.rpartition(":")
    if not colon or not PORT.fullmatch(port) or not 1 <= int(port) <= 65535:
        raise refusal
    if host.startswith("[") and host.endswith("]"):
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            raise refusal from None
        return address
    if re.fullmatch(r"[0-9.]+", host):
        try:
            ipaddress.IPv4Address(host)
        except ValueError:
            raise refusal from None
        return address
    if not HOST_NAME.fullmatch(host):
        raise refusal
    return address


def host_of(address: str) -> str:
    return address.rpartition(":")[0]


def check_job_folder(out: Path, force: bool) -> Path:
    """A folder to write the job into: absent (its parent a folder), or an empty folder, or any folder with
    --force; never a symbolic link."""
    out = Path(out)
    if os.path.islink(out):
        raise InputError(f"--out {out}: is a symbolic link (refused: it could point at another user's folder)")
    if out.exists():
        if not out.is_dir():
            raise InputError(f"--out {out}: exists and is not a folder")
        if any(out.iterdir()) and not force:
            raise InputError(f"--out {out}: the folder is not empty (choose a new folder, or --force to write into it)")
    elif not out.parent.is_dir():
        raise InputError(f"--out {out}: the folder {out.parent} does not exist (create it first)")
    return out


def check_certificate(path: Path | None) -> Path | None:
    """The CA file `flwr run` should trust (PEM text), or None."""
    if path is not None and "BEGIN CERTIFICATE" not in read_text(path, "--root-certificates"):
        raise InputError(f"--root-certificates {path}: no PEM certificate in it")
    return path


def _folder(path: Path) -> Path:
    """mkdir that refuses a symbolic link in its place."""
    if os.path.islink(path):
        raise InputError(f"--out: {path} is a symbolic link (refused)")
    path.mkdir(exist_ok=True)
    return path


def _write(path: Path, data: bytes) -> Path:
    """Write `data` to `path`, never through a symbolic link planted there (O_NOFOLLOW)."""
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
    except OSError as error:
        raise InputError(f"--out: cannot write {path} ({error.strerror}; a symbolic link there is refused)") from None
    with os.fdopen(descriptor, "wb") as out:
        out.write(data)
    return path


def _npz(**arrays: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def connection_toml(address: str, ca: Path | None, insecure: bool) -> str:
    """FLWR_HOME/config.toml: one SuperLink connection, the default (Flower >= 1.26's connection format)."""
    lines = ["[superlink]", f'default = "{CONNECTION}"', "", f"[superlink.{CONNECTION}]", f"address = {json.dumps(address)}"]
    if insecure:
        lines.append("insecure = true")
    elif ca is not None:
        lines.append(f"root-certificates = {json.dumps(str(ca))}")  # a JSON string is a valid TOML basic string
    return "\n".join(lines) + "\n"


def run_instructions(out: Path, address: str, n_clients: int, ca: Path | None, insecure: bool) -> str:
    fleet = f"{host_of(address)}:{FLEET_PORT}"
    server_tls = "--insecure" if insecure else "--ssl-ca-certfile CA.pem --ssl-certfile SERVER.pem --ssl-keyfile SERVER.key"
    client_tls = "--insecure" if insecure else f"--root-certificates {ca or 'CA.pem'}"
    return f"""# FedCDWA on Flower ({n_clients} clients), written by `papers fedcdwa flower-job`

Every machine needs the project checkout and its environment (flwr 1.32.1), with PYTHONPATH = the checkout.
{"**Insecure**: the model and the clients' updates cross the network in clear; use only on a trusted network." if insecure else
 "TLS: the SuperLink's certificate must name its host; `flwr run` and the SuperNodes trust the CA."}

1. On the SuperLink machine ({host_of(address)}), copy `server/` there and start (Control API {address},
   Fleet API :{FLEET_PORT}):

       flower-superlink {server_tls} --disable-runtime-dependency-installation

2. On client K's machine (K = 0..{n_clients - 1}), copy `clients/client_K.npz` there and start:

       flower-supernode {client_tls} --superlink {fleet} --node-config "client=K data='/path/to/client_K.npz'"

3. From this machine, once the SuperNodes are connected (JOB = server/job.json's path on the SuperLink machine;
   here {out.absolute() / "server" / "job.json"}):

       FLWR_HOME={out.absolute() / "flwr_home"} flwr run {out.absolute() / "app"} {CONNECTION} --run-config "job='JOB'"

The ServerApp writes result.json beside job.json on the SuperLink machine: the same record as
`papers fedcdwa simulate --json` (accuracies, per-round history, bytes, the final weights' sha256).
"""


def write_job(out: Path, cfg: FedConfig, federation: Federation, seed: int, address: str, ca: Path | None = None,
              insecure: bool = False, force: bool = False, timeout_s: float = 3600) -> Path:
    """Write the job folder (module docstring); returns its RUN.md."""
    from .flower import APP_DIR, client_arrays, job_document

    out = _folder(check_job_folder(out, force))
    app, server, clients, home = (_folder(out / name) for name in ("app", "server", "clients", "flwr_home"))
    for name in APP_FILES:
        _write(app / name, (APP_DIR / name).read_bytes())
    _write(server / "job.json", json.dumps(job_document(cfg, federation, seed, timeout_s), indent=1).encode())
    _write(server / "test.npz", _npz(x=federation.test_x, y=federation.test_y))
    written = {f"client_{k}.npz" for k in range(len(federation.clients))}
    for stale in clients.glob("client_*.npz"):  # a larger earlier job's (--force): unlink never follows a link
        if stale.name not in written:
            stale.unlink()
    for k, data in enumerate(federation.clients):
        _write(clients / f"client_{k}.npz", _npz(**client_arrays(data)))
    trusted = _write(home / "ca.pem", read_text(ca, "--root-certificates").encode()) if ca is not None else None
    _write(home / "config.toml", connection_toml(address, trusted and trusted.absolute(), insecure).encode())
    return _write(out / "RUN.md", run_instructions(out, address, len(federation.clients), trusted, insecure).encode())
