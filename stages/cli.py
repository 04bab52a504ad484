"""`papers`: list, run, report and browse the paper pipelines; manage the local Prefect server."""
from __future__ import annotations

import http.client
import importlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from functools import cached_property
from pathlib import Path
from typing import NoReturn

import psutil
import typer
import typer.main
import click
from click.exceptions import UsageError
from typer.core import TyperCommand, TyperGroup
from rich.markup import escape
from rich.table import Table

from tasks.core.claims import claims_rows, read_claims, status_word
from tasks.core.inputs import InputError
from tasks.core.io import repo_root
from tasks.core.profiles import PROFILES

from tasks.core.console import console as make_console
from .declarations import DeclarationError, paper_commands
from .environment import configure, mlflow_ui_port
from .report import claims_paths
from .spec import paper_stages, papers


def _root() -> Path:
    """The project in the working directory, else the one this package was installed from."""
    try:
        return repo_root(Path.cwd())
    except FileNotFoundError:
        return repo_root(Path(__file__).parent)


def refuse(error: InputError) -> NoReturn:
    """A user's mistake: its one line, then exit 2."""
    make_console(stderr=True).print(f"[red]error:[/] {escape(str(error))}", soft_wrap=True)
    sys.exit(2)


ROOT = _root()
try:
    configure(ROOT)
except InputError as error:  # a bad PAPERS_* setting: one line before any command starts
    refuse(error)
MLFLOW_UI_PORT = mlflow_ui_port()

from . import server  # noqa: E402  (reads the environment configure() set)
from .team import app as team_app  # noqa: E402

# Each paper's commands live in flows/<paper>/cli.py and need torch, mlflow or SCIP to run. `papers`
# lists them from the papers' declarations (flows/<paper>/paper.py: name, typer app, summary, which the app takes
# as its help) and imports a module only when its commands run, so `papers --help`, `papers list` and
# `papers report` start in a fraction of a second (benchmarks/cli_startup.py).
class PaperApp(TyperCommand):
    """A paper's sub-app as `papers --help` lists it; `Papers` runs the real one (`group`) in its place."""

    def __init__(self, name: str, source: str, summary: str):
        super().__init__(name=name, help=summary)
        self.source = source  # "module:attribute" of its typer.Typer

    @cached_property
    def group(self) -> click.Command:
        """The sub-app built as `app.add_typer(sub_app, name=...)` builds it (with the root's markup mode)."""
        module, attribute = self.source.split(":")
        mounted = typer.Typer(rich_markup_mode=app.rich_markup_mode, pretty_exceptions_short=app.pretty_exceptions_short)
        mounted.add_typer(getattr(importlib.import_module(module), attribute), name=self.name)
        return typer.main.get_group(mounted).commands[self.name]

    @property
    def commands(self) -> dict[str, click.Command]:
        """Its commands, as a walk of the command tree reads a group's (imports the module)."""
        return self.group.commands


class Papers(TyperGroup):
    """The root group: its own commands and `server`, then every declared paper's sub-apps."""

    def __init__(self, **attrs):
        super().__init__(**attrs)
        for command in paper_commands(ROOT):
            if command.name in self.commands:
                raise DeclarationError(f"flows/{command.paper}/paper.py: the command name {command.name!r} is one of "
                                       "`papers`' own; choose another")
            self.add_command(PaperApp(command.name, command.source, command.summary))

    def resolve_command(self, ctx: click.Context, args: list[str]):
        name, command, rest = super().resolve_command(ctx, args)
        return name, command.group if isinstance(command, PaperApp) else command, rest


app = typer.Typer(cls=Papers, help=__doc__, no_args_is_help=True, add_completion=False)
server_app = typer.Typer(help="The local Prefect server (state under .prefect/).", no_args_is_help=True)
app.add_typer(server_app, name="server")
app.add_typer(team_app, name="team")
console = make_console()
err_console = make_console(stderr=True)


def main() -> None:
    """The `papers` entry point: a user's mistake is one line and exit 2, never a traceback."""
    try:
        code = app(standalone_mode=False)
    except UsageError as error:  # a bad option or argument: click's own message, one line
        where = f"{error.ctx.command_path}: " if error.ctx else ""
        err_console.print(f"[red]error:[/] {escape(where + error.format_message())} (see --help)", soft_wrap=True)
        sys.exit(2)
    except InputError as error:
        refuse(error)
    except server.ServerError as error:
        err_console.print(f"[red]error:[/] {escape(str(error))}", soft_wrap=True)
        sys.exit(1)
    except (KeyboardInterrupt, typer.Abort):
        err_console.print("interrupted")
        sys.exit(130)
    sys.exit(code if isinstance(code, int) else 0)


def claims_table(documents: list[dict], title: str) -> Table:
    table = Table(title=title, show_lines=False)
    for column in ("paper", "claim", "statement", "paper's figure", "ours", "threshold", "status"):
        table.add_column(column, overflow="fold")
    colours = {"pass": "green", "FAIL": "red", "inconclusive": "dark_orange", "undecided": "yellow", "report": "blue"}
    for document in documents:
        for row in claims_rows(document):
            table.add_row(*row[:-1], f"[{colours[row[-1]]}]{row[-1]}[/]")
    return table


@app.command("list")
def list_papers() -> None:
    """Papers, their stages and their last claim status."""
    table = Table(title="papers")
    for column in ("paper", "stages", "profile", "claims"):
        table.add_column(column)
    for paper in papers(ROOT):
        documents = read_claims([ROOT / "data" / paper / "claims.json"])
        if documents:
            statuses = [status_word(c) for c in documents[0]["claims"]]
            summary = ", ".join(f"{statuses.count(s)} {s}" for s in ("pass", "FAIL", "inconclusive", "undecided", "report")
                                if s in statuses)
            profile = documents[0]["profile"]
        else:
            summary, profile = "not run", "-"
        table.add_row(paper, " -> ".join(s.stage for s in paper_stages(ROOT, paper)), profile, summary)
    console.print(table)


def committed_profile() -> str | None:
    """The profile params.yaml holds: the one `papers run` reproduces in the checkout itself."""
    import yaml

    return (yaml.safe_load((ROOT / "params.yaml").read_text()) or {}).get("profile")


def without_sigint(command: list[str], env: dict) -> int:
    """Run `command` in the checkout and return its status. Ctrl-C reaches the whole process group: the stage
    ends itself (FAILED runs, no lock); this process waits for DVC to finish saying so, as DVC waits for the stage."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        return subprocess.run(command, cwd=ROOT, env=env).returncode
    finally:
        signal.signal(signal.SIGINT, previous)


@app.command()
def run(
    paper: str = typer.Argument("all", help="A paper (see `papers list`) or 'all'."),
    profile: str = typer.Option(None, help=f"One of {', '.join(PROFILES)}; default: the one in params.yaml."),
    force: bool = typer.Option(False, help="Rerun stages even when DVC finds them up to date."),
) -> None:
    """Reproduce a paper's pipeline (or all and the claims report) with `dvc repro`, in the checkout at params.yaml's
    profile (the papers' README results tables follow), else as a DVC experiment in a temporary copy: the
    checkout stays as it is."""
    if paper != "all" and paper not in papers(ROOT):
        raise typer.BadParameter(f"unknown paper {paper!r} (papers: {', '.join(papers(ROOT))})", param_hint="PAPER")
    if profile is not None and profile not in PROFILES:
        raise typer.BadParameter(f"must be one of {PROFILES}, got {profile!r}", param_hint="--profile")
    server.start()
    target = [] if paper == "all" else [str(Path("stages") / paper / "dvc.yaml")]
    env = {**os.environ, "PAPERS_INVOCATION": os.environ.get("PAPERS_INVOCATION") or uuid.uuid4().hex}
    if profile is None or profile == committed_profile():
        code = without_sigint([sys.executable, "-m", "dvc", "repro", *(["--force"] if force else []), *target], env)
        if code != 0:
            raise typer.Exit(code)
        report(readme=True)  # the checkout's results changed: its READMEs show them
        return
    from .experiment import experiment_claims, experiment_command, experiment_name

    name = experiment_name(paper, profile)
    code = without_sigint(experiment_command(profile, target, name, force), env)
    if code != 0:
        raise typer.Exit(code)
    console.print(claims_table(experiment_claims(ROOT, name, profile), f"claims of experiment {name} (profile {profile})"))
    console.print(f"The checkout is unchanged: `dvc exp show` lists the experiment, `dvc exp apply {name}` brings its "
                  "results into the workspace.")
    urls()


@app.command()
def report(
    readme: bool = typer.Option(False, "--readme", help="Also rewrite each paper README's results table from its claims.json."),
    html: bool = typer.Option(False, "--html", help="Also write the claims page reports/index.html (claims, verdicts, "
                                                    "plots; opens offline in a browser)."),
) -> None:
    """The combined claims table of every paper that has run."""
    if readme:
        from .readme import write_readmes

        for path in write_readmes(ROOT):
            console.print(f"rewrote the results of {path.relative_to(ROOT)}")
    if html:
        from .claims_page import write_claims_page

        console.print(f"wrote the claims page {write_claims_page(ROOT).as_uri()}", soft_wrap=True)
    documents = read_claims(claims_paths(ROOT))
    if not documents:
        console.print("no claims yet: run `papers run` first")
        return
    profiles = ", ".join(sorted({d["profile"] for d in documents}))
    console.print(claims_table(documents, f"claims (profile: {profiles})"))
    urls()


MLFLOW_UI_URL = f"http://127.0.0.1:{MLFLOW_UI_PORT}"
# MLflow 3.17's UI shows its GenAI view unless the page's `workflowType` says otherwise or the browser remembers its
# sidebar switch ("Model training"); it does not go by an experiment's mlflow.experimentKind tag. So the URL printed
# opens the experiments list in the model-training view (an experiment's tabs keep it; its list's links do not).
MLFLOW_UI_PAGE = f"{MLFLOW_UI_URL}/#/experiments?workflowType=machine_learning"
UI_START_TIMEOUT_S = 120  # the first start on a new store migrates it: 45 s seen on a busy 2-core machine
# Browsing needs MLflow's web server alone. Without this `mlflow ui` (3.17) also starts its job runner
# and huey consumers (GenAI jobs this project never submits): 10 processes and 2.4 GB instead of 2 and 0.5 GB.
UI_ENVIRONMENT = {"MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
UI_LOG_LINES = 20  # of the log shown when the UI does not start
UI_UMASK = 0o077  # what the UI creates (a new store, its user store) is its owner's alone
MLFLOW_LOGIN = 'Basic realm="mlflow"'  # what MLflow's basic-auth app asks of a client without a login


def urls() -> None:
    console.print(f"Prefect UI: {server.ui_url()}   MLflow UI: {MLFLOW_UI_PAGE} (`papers ui`)", soft_wrap=True)


def fail(message: str, details: str = "") -> NoReturn:
    """One error line (and what explains it, e.g. the end of a log), then exit 1."""
    err_console.print(f"[red]error:[/] {escape(message)}", soft_wrap=True)
    if details:
        err_console.print(escape(details), soft_wrap=True, highlight=False)
    raise typer.Exit(1)


def mlflow_ui_state() -> str:
    """What listens on 127.0.0.1:MLFLOW_UI_PORT: 'free' (nothing), 'mlflow' (a server whose /version asks for
    MLflow's basic-auth login, as `papers ui` serves it), 'open' (one whose /version is a version number, as
    an MLflow without a login answers) or 'other'."""
    try:
        with socket.create_connection(("127.0.0.1", MLFLOW_UI_PORT), timeout=2):
            pass
    except OSError:
        return "free"
    try:
        with urllib.request.urlopen(f"{MLFLOW_UI_URL}/version", timeout=5) as response:
            version = response.read(100).decode(errors="replace").strip()
    except urllib.error.HTTPError as error:  # an error status: MLflow's login, or not MLflow
        return "mlflow" if error.code == 401 and error.headers.get("WWW-Authenticate") == MLFLOW_LOGIN else "other"
    except (OSError, http.client.HTTPException):  # a silent or a non-HTTP service
        return "other"
    return "open" if re.fullmatch(r"\d+\.\d+\S*", version) else "other"


def listens_on_ui_port(process: psutil.Process) -> bool:
    """Whether the process or a child of it (uvicorn) is the one listening on 127.0.0.1:MLFLOW_UI_PORT."""
    try:
        return any(c.status == psutil.CONN_LISTEN and c.laddr.port == MLFLOW_UI_PORT
                   for p in (process, *process.children(recursive=True)) for c in p.net_connections("inet"))
    except psutil.Error:
        return False


def start_detached(command: list[str], env: dict[str, str], log: Path) -> int | None:
    """Start the MLflow UI in its own session, logging to `log`; its pid once it answers, or None when
    another `papers ui` started first (this one then exits on "address in use"). Exit 1 with the end
    of its log when it dies or stays silent for UI_START_TIMEOUT_S."""
    log.parent.mkdir(exist_ok=True)
    offset = log.stat().st_size if log.exists() else 0
    with open(log, "a") as handle:
        process = subprocess.Popen(command, cwd=ROOT, env=env, start_new_session=True, stdout=handle,
                                   stderr=subprocess.STDOUT, umask=UI_UMASK)
    deadline = time.monotonic() + UI_START_TIMEOUT_S
    while process.poll() is None and time.monotonic() < deadline:
        if listens_on_ui_port(psutil.Process(process.pid)) and mlflow_ui_state() == "mlflow":
            return process.pid
        time.sleep(0.5)
    with open(log, errors="replace") as handle:
        handle.seek(offset)
        said = "\n".join(handle.read().splitlines()[-UI_LOG_LINES:])
    where = f"the end of its log ({log.relative_to(ROOT)})"
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        fail(f"the MLflow UI did not answer at {MLFLOW_UI_URL} within {UI_START_TIMEOUT_S} s and was stopped; {where}:",
             said)
    if mlflow_ui_state() == "mlflow":
        return None
    fail(f"the MLflow UI exited (code {process.returncode}) before answering at {MLFLOW_UI_URL}; {where}:", said)


@app.command()
def ui(detach: bool = typer.Option(False, help="Leave the MLflow UI running in the background.")) -> None:
    """Serve the MLflow UI (behind a login of yours alone) and the Prefect UI on 127.0.0.1 and print their URLs."""
    state = mlflow_ui_state()
    if state == "other":
        fail(f"port {MLFLOW_UI_PORT} of 127.0.0.1 is taken by something that is not MLflow; stop it, or choose "
             f"another port with PAPERS_MLFLOW_PORT")
    if state == "open":
        fail(f"an MLflow UI without a login (every local account may use it) runs at {MLFLOW_UI_URL}; stop it, "
             f"or choose another port with PAPERS_MLFLOW_PORT")
    server.start()
    from tasks.core.private import private_folder

    from .ui_login import how_to_log_in, server_environment

    store = private_folder(ROOT / "mlflow", tighten=True)
    if state == "mlflow":
        urls()
        console.print(f"MLflow UI already running at {MLFLOW_UI_URL}")
        console.print(how_to_log_in(store, ROOT))
        return
    from tasks.core.tracking import artifact_root, tracking_uri

    # `mlflow ui` is `mlflow server` in 3.17. No artifact proxy: the UI reads our file artifact store itself
    # (get-artifact), and the proxy would take any client's uploads into ./mlartifacts.
    command = [str(Path(sys.executable).with_name("mlflow")), "ui", "--app-name", "basic-auth",
               "--backend-store-uri", tracking_uri(ROOT), "--no-serve-artifacts",
               "--default-artifact-root", artifact_root(ROOT).as_uri(),
               "--host", "127.0.0.1", "--port", str(MLFLOW_UI_PORT), "--workers", "1"]
    # A value already in the environment wins, but for the login: the one printed below is the one served.
    env = {**UI_ENVIRONMENT, **os.environ, **server_environment(store)}
    if detach:
        log = store / "ui.log"
        pid = start_detached(command, env, log)
        urls()
        if pid is None:
            console.print(f"MLflow UI already running at {MLFLOW_UI_URL}")
        else:
            console.print(f"MLflow UI running in the background (pid {pid}, log {log.relative_to(ROOT)}); "
                          f"stop it with `kill {pid}`")
        console.print(how_to_log_in(store, ROOT))
        return
    mlflow_ui = subprocess.Popen(command, cwd=ROOT, env=env, umask=UI_UMASK)
    urls()
    console.print(how_to_log_in(store, ROOT))
    console.print("Ctrl-C stops the MLflow UI (the Prefect server keeps running: `papers server stop`).")
    try:
        mlflow_ui.wait()
    except KeyboardInterrupt:
        mlflow_ui.terminate()


def deployment_of(paper: str, image: bool) -> tuple[str, str]:
    """The work pool and prefect.yaml deployment of a paper's pipeline, in the checkout or in the image."""
    return ("papers-image", f"{paper}-pipeline-image") if image else ("papers-process", f"{paper}-pipeline")


@app.command()
def deploy(paper: str = typer.Argument(..., help="The paper's slug, as `papers list` shows it."),
           image: bool = typer.Option(False, "--image", help="In the project's image (`make image`), through buildah: "
                                                             "the papers-image pool, run on demand.")) -> None:
    """Register the paper's scheduled deployment (prefect.yaml) with the local server."""
    if paper not in papers(ROOT):
        raise InputError(f"paper {paper!r}: no such paper (papers: {', '.join(papers(ROOT))})")
    server.start()
    prefect = str(Path(sys.executable).with_name("prefect"))
    pool, name = deployment_of(paper, image)
    subprocess.run([prefect, "work-pool", "create", pool, "--type", "process", "--overwrite"],
                   cwd=ROOT, check=True, capture_output=True)
    done = subprocess.run([prefect, "--no-prompt", "deploy", "--name", name], cwd=ROOT)
    if done.returncode == 0:  # prefect's own hints assume a shell with its API URL and credential; these have both
        papers_command = Path(sys.executable).with_name("papers")
        console.print(f"From this checkout, in any shell: `{papers_command} prefect worker start --pool {pool}` runs its "
                      f"runs; `{papers_command} prefect deployment run reproduce-paper/{name}` starts one now.")
    raise typer.Exit(done.returncode)


@app.command("prefect", add_help_option=False,
             context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def prefect_command(ctx: typer.Context) -> None:
    """The prefect CLI against this checkout's server, with its API credential (`papers prefect worker start
    --pool papers-process`, `papers prefect deployment run NAME`, `papers prefect flow-run ls`)."""
    prefect = str(Path(sys.executable).with_name("prefect"))
    os.execv(prefect, [prefect, *ctx.args])  # configure() set the URL and credential in this environment


@server_app.command("start")
def server_start() -> None:
    """Start the server in the background (no-op when it is up)."""
    console.print(f"Prefect server up at {server.start()} (UI {server.ui_url()})")


@server_app.command("stop")
def server_stop() -> None:
    """Stop the server this project started, and the warm hosts that run stages with this interpreter."""
    console.print("Prefect server stopped" if server.stop() else "no Prefect server of this project was running")
    from .warm import stop_hosts

    if hosts := stop_hosts():
        console.print(f"warm stage hosts stopped: {hosts}")


@server_app.command("status")
def server_status() -> None:
    """Exit 0 when the server answers, 1 when it does not."""
    server.pid_file()  # a folder there is refused as `start` and `stop` refuse it
    if server.is_up():
        console.print(f"Prefect server up at {server.api_url()}")
    else:
        console.print(f"Prefect server down ({server.api_url()})")
        raise typer.Exit(1)
