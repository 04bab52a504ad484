"""`papers team`: the team profile on one machine, for trying it (docs/team.md describes the same on separate hosts).

    papers team up [--port N]        PostgreSQL, MLflow (basic auth), Prefect (auth string), Dask (TLS, two
                                     workers) and the DVC remote (WebDAV, mutual TLS), data under .team/ (0700)
    papers team status               each service, up or down
    papers team down                 stop them all (their data stays)
    papers team member NAME          a member's bundle: MLflow account, a certificate for Dask and the DVC remote
    papers team join BUNDLE          in a member's checkout: take the bundle, point DVC's remote at the team's
    papers team exec -- COMMAND...   COMMAND with the team's servers: MLflow, Prefect, the Dask cluster

The account that runs `up` hosts the services and is the MLflow admin; it is also its own first member (its
bundle is joined to its checkout at once). The single-machine default is untouched: nothing changes for a
command not run through `papers team exec`.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import typer

from tasks.core.inputs import InputError
from tasks.core.io import repo_root
from tasks.core.private import UnsafePath, check_private, private_folder, read_private, replace_file, secret

# No locals in a traceback: they hold the team's credentials.
app = typer.Typer(help="The team profile: shared MLflow, Prefect, Dask and DVC remote (data under .team/).",
                  no_args_is_help=True, pretty_exceptions_show_locals=False)

TEAM_FOLDER = ".team"
CLIENT = "client"  # .team/client/: the bundle a checkout uses (its member's)
BUNDLE_FILE = "client.json"
DVC_REMOTE = "team"
MEMBER_CERTIFICATE = "member"  # member.pem and member.key of a bundle: the member's TLS identity
MEMBER_NAME = r"^[a-z_][a-z0-9_-]{0,31}$"  # a POSIX login name: it names an MLflow account and a folder


def checkout() -> Path:
    return repo_root(Path.cwd())


def team_root(root: Path) -> Path:
    return root / TEAM_FOLDER


def say(message: str) -> None:
    typer.echo(message)


def fail(message: str, code: int = 1) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def layout_or_fail(port: int | None = None):
    from .team_services import TeamError, load_layout

    root = team_root(checkout())
    if port is None and not (root / "team.json").exists():
        fail(f"no team here: {root} has no services (`papers team up` starts them)")
    try:
        return load_layout(root, port)
    except (TeamError, UnsafePath) as error:
        fail(str(error))


# --- bundles -----------------------------------------------------------------------------------------------------

def write_bundle(layout, name: str, mlflow_password: str) -> Path:
    """members/NAME/: client.json (0600: the servers' addresses, NAME's MLflow login, the Prefect auth string), the
    team CA, and NAME's certificate and key, which the Dask cluster and the DVC remote both ask for."""
    from . import team_services as services
    from . import team_tls

    folder = layout.folder("members", name)
    tls = services.tls_folder(layout)
    team_tls.issue(tls, folder, MEMBER_CERTIFICATE)
    replace_file(folder / "ca.pem", (tls / "ca.pem").read_bytes())
    bundle = {"member": name,
              "mlflow": {"uri": layout.mlflow_url, "username": name, "password": mlflow_password},
              "prefect": {"url": layout.prefect_url, "auth": services.prefect_auth(layout)},
              "dask": {"address": layout.dask_address},
              "dvc": {"url": services.dav_url(layout)}}
    replace_file(folder / BUNDLE_FILE, json.dumps(bundle, indent=1).encode())
    return folder


def read_bundle(folder: Path) -> dict:
    """A bundle folder of ours (0700) and its client.json (0600), else an InputError saying why."""
    try:
        check_private(folder)
        return json.loads(read_private(folder / BUNDLE_FILE))
    except (OSError, ValueError) as error:
        raise InputError(f"team bundle {folder}: {error}") from None


def client_environment(folder: Path) -> dict[str, str]:
    """The environment that points a command at the team's servers, from the bundle in `folder`."""
    bundle = read_bundle(folder)
    return {
        "MLFLOW_TRACKING_URI": bundle["mlflow"]["uri"], "MLFLOW_TRACKING_USERNAME": bundle["mlflow"]["username"],
        "MLFLOW_TRACKING_PASSWORD": bundle["mlflow"]["password"],
        "PREFECT_API_URL": bundle["prefect"]["url"], "PREFECT_API_AUTH_STRING": bundle["prefect"]["auth"],
        "PAPERS_TASK_RUNNER": "dask", "PAPERS_DASK_ADDRESS": bundle["dask"]["address"],
        "DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION": "True",
        "DASK_DISTRIBUTED__COMM__TLS__CA_FILE": str(folder / "ca.pem"),
        "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT": str(folder / f"{MEMBER_CERTIFICATE}.pem"),
        "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY": str(folder / f"{MEMBER_CERTIFICATE}.key"),
        # The CA that DVC checks the team's remote against. Not the remote's `ssl_verify`: httpx 0.28 drops the
        # client certificate when that is a path (httpx._config.create_ssl_context returns before loading it).
        "SSL_CERT_FILE": str(folder / "ca.pem"),
        # Dask reads its config (the TLS files above) when imported: a warm host imported it with its own
        # environment, so the team's stages run in fresh interpreters.
        "PAPERS_WARM": "0",
    }


def join_bundle(root: Path, source: Path) -> Path:
    """Copy the bundle in `source` into the checkout's .team/client/ and point DVC's remote `team` (in
    .dvc/config.local, which git ignores) at the team's WebDAV remote with the bundle's certificate. Outside
    `papers team exec` DVC does not trust the remote's certificate (the team CA comes by SSL_CERT_FILE), so a
    plain `dvc push` fails rather than talk to an unchecked server."""
    bundle = read_bundle(source)
    private_folder(team_root(root), tighten=True)
    target = private_folder(team_root(root) / CLIENT)
    if target.resolve() != source.resolve():
        # client.json last: its presence says the copy is whole (`up` joins only a checkout without one)
        for path in sorted(source.iterdir(), key=lambda p: (p.name == BUNDLE_FILE, p.name)):
            if path.is_file() and not path.is_symlink():
                replace_file(target / path.name, read_private(path))
    for args in (["remote", "add", "--local", "--force", "--default", DVC_REMOTE, bundle["dvc"]["url"]],
                 ["remote", "modify", "--local", DVC_REMOTE, "cert_path", str(target / f"{MEMBER_CERTIFICATE}.pem")],
                 ["remote", "modify", "--local", DVC_REMOTE, "key_path", str(target / f"{MEMBER_CERTIFICATE}.key")]):
        done = subprocess.run([sys.executable, "-m", "dvc", *args], cwd=root, capture_output=True, text=True)
        if done.returncode != 0:
            raise InputError(f"dvc {' '.join(args[:2])}: {done.stderr.strip()}")
    return target


# --- commands ----------------------------------------------------------------------------------------------------

@app.command()
def up(port: int = typer.Option(None, help="PostgreSQL's port; MLflow, Prefect, Dask (and its dashboard) and the DVC remote "
                                           "take the next five. Default 5430, then what the first `up` chose.")) -> None:
    """Start the team's services on 127.0.0.1 (each a no-op when it is up), data under .team/."""
    from . import team_services as services

    if port is not None and not 1024 <= port <= 65530:
        fail(f"--port: must be in 1024..65530, got {port}", 2)
    layout = layout_or_fail(port)
    root = checkout()
    try:
        services.up(layout, root, say)
        admin, password = services.mlflow_admin(layout)
        if not (team_root(root) / CLIENT / BUNDLE_FILE).exists():
            join_bundle(root, write_bundle(layout, admin, password))
    except (services.TeamError, UnsafePath, InputError) as error:
        fail(str(error))
    for name, state in services.status(layout).items():
        say(f"{name:9} {state}")
    say(f"this checkout uses the team through `papers team exec -- COMMAND` (bundle {team_root(root) / CLIENT})")


@app.command()
def down() -> None:
    """Stop the team's services (their data stays under .team/)."""
    from . import team_services as services

    stopped = services.down(layout_or_fail())
    say(f"stopped: {', '.join(stopped)}" if stopped else "nothing was running")


@app.command()
def status() -> None:
    """Each service, up (with what shows it) or down; exit 1 unless all are up."""
    from . import team_services as services

    states = services.status(layout_or_fail())
    for name, state in states.items():
        say(f"{name:9} {state}")
    if any(state == "down" for state in states.values()):
        raise typer.Exit(1)


@app.command()
def member(name: str = typer.Argument(..., help="The member's login name (a new MLflow account).")) -> None:
    """Make a member's bundle under .team/members/NAME/ (hand it over privately; they run `papers team join`)."""
    import re

    from . import team_services as services

    if not re.match(MEMBER_NAME, name):
        fail(f"NAME: must be a login name (lower-case letters, digits, _ and -), got {name!r}", 2)
    layout = layout_or_fail()
    try:
        password = secret(layout.folder("members", name) / "mlflow-password")
        services.add_mlflow_user(layout, name, password)
        folder = write_bundle(layout, name, password)
    except (services.TeamError, UnsafePath) as error:
        fail(str(error))
    say(f"bundle of {name}: {folder} (copy it to them privately; then, in their checkout: papers team join FOLDER)")


@app.command()
def join(bundle: Path = typer.Argument(..., help="A member's bundle folder (from `papers team member`).")) -> None:
    """Use the team from this checkout: take the bundle, set DVC's remote `team` (through `papers team exec`)."""
    try:
        target = join_bundle(checkout(), bundle)
    except (InputError, UnsafePath) as error:
        fail(str(error), 2)
    say(f"joined: bundle in {target}; DVC remote `{DVC_REMOTE}` is the default in .dvc/config.local")


@app.command("exec", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def exec_command(command: list[str] = typer.Argument(..., help="The command and its arguments (after --).")) -> None:
    """Run COMMAND with the team's servers: MLflow, Prefect and the Dask cluster (PAPERS_TASK_RUNNER=dask)."""
    folder = team_root(checkout()) / CLIENT
    try:
        env = {**os.environ, **client_environment(folder)}
    except InputError as error:
        fail(f"{error} (`papers team join BUNDLE` first)", 2)
    executable = shutil.which(command[0], path=env.get("PATH"))
    if executable is None:
        fail(f"{command[0]}: no such command", 2)
    os.execve(executable, command, env)


if __name__ == "__main__":  # `python -m stages.team ...`: the same commands without the `papers` entry point
    app(prog_name="papers team")
