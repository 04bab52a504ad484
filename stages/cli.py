"""`papers`: list, run, report and browse the paper pipelines; manage the local Prefect server."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import typer
from typer._click.exceptions import UsageError  # typer vendors its own click: plain click's classes never match
from rich.markup import escape
from rich.table import Table

from tasks.core.claims import claims_rows, read_claims, status_word
from tasks.core.inputs import InputError
from tasks.core.io import repo_root
from tasks.core.params import PROFILES

from tasks.core.console import console as make_console
from .environment import MLFLOW_UI_PORT, configure
from .report import claims_paths
from .spec import paper_stages, papers


def _root() -> Path:
    """The project in the working directory, else the one this package was installed from."""
    try:
        return repo_root(Path.cwd())
    except FileNotFoundError:
        return repo_root(Path(__file__).parent)


ROOT = _root()
configure(ROOT)

from . import server  # noqa: E402  (reads the environment configure() set)
from flows.mip_early_stop.cli import app as mip_app  # noqa: E402
from flows.neural_qaoa2.cli import app as qaoa2_app  # noqa: E402
from flows.se3_sync.cli import app as se3_sync_app  # noqa: E402
from flows.unidrag.cli import app as cfd_app  # noqa: E402
from flows.unidrag.cli import unidrag_app  # noqa: E402

app = typer.Typer(help=__doc__, no_args_is_help=True, add_completion=False)
server_app = typer.Typer(help="The local Prefect server (state under .prefect/).", no_args_is_help=True)
app.add_typer(server_app, name="server")
app.add_typer(se3_sync_app, name="se3-sync")
app.add_typer(mip_app, name="mip")
app.add_typer(qaoa2_app, name="qaoa2")
app.add_typer(cfd_app, name="cfd")
app.add_typer(unidrag_app, name="unidrag")
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
        err_console.print(f"[red]error:[/] {escape(str(error))}", soft_wrap=True)
        sys.exit(2)
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
    colours = {"pass": "green", "FAIL": "red", "undecided": "yellow"}
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
            statuses = [status_word(c["passed"]) for c in documents[0]["claims"]]
            summary = ", ".join(f"{statuses.count(s)} {s}" for s in ("pass", "FAIL", "undecided") if s in statuses)
            profile = documents[0]["profile"]
        else:
            summary, profile = "not run", "-"
        table.add_row(paper, " -> ".join(s.stage for s in paper_stages(ROOT, paper)), profile, summary)
    console.print(table)


def set_profile(profile: str) -> None:
    """Write the global profile into params.yaml, as `dvc exp run -S profile=...` would."""
    if profile not in PROFILES:
        raise typer.BadParameter(f"must be one of {PROFILES}, got {profile!r}", param_hint="--profile")
    path = ROOT / "params.yaml"
    text = path.read_text()
    path.write_text(re.sub(r"(?m)^profile:.*$", f"profile: {profile}", text))


@app.command()
def run(
    paper: str = typer.Argument("all", help="A paper (see `papers list`) or 'all'."),
    profile: str = typer.Option(None, help=f"One of {', '.join(PROFILES)}; default: the one in params.yaml."),
    force: bool = typer.Option(False, help="Rerun stages even when DVC finds them up to date."),
) -> None:
    """Reproduce a paper's pipeline (or all and the claims report) with `dvc repro`."""
    if paper != "all" and paper not in papers(ROOT):
        raise typer.BadParameter(f"unknown paper {paper!r} (papers: {', '.join(papers(ROOT))})", param_hint="PAPER")
    if profile:
        set_profile(profile)
    server.start()
    target = [] if paper == "all" else [str(Path("stages") / paper / "dvc.yaml")]
    env = {**os.environ, "PAPERS_INVOCATION": os.environ.get("PAPERS_INVOCATION") or uuid.uuid4().hex}
    # Ctrl-C reaches the whole process group: the stage ends itself (FAILED runs, no lock); this
    # process waits for DVC to finish saying so, as DVC waits for the stage.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        done = subprocess.run([sys.executable, "-m", "dvc", "repro", *(["--force"] if force else []), *target], cwd=ROOT, env=env)
    finally:
        signal.signal(signal.SIGINT, previous)
    if done.returncode != 0:
        raise typer.Exit(done.returncode)
    report()


@app.command()
def report() -> None:
    """The combined claims table of every paper that has run."""
    documents = read_claims(claims_paths(ROOT))
    if not documents:
        console.print("no claims yet: run `papers run` first")
        return
    profiles = ", ".join(sorted({d["profile"] for d in documents}))
    console.print(claims_table(documents, f"claims (profile: {profiles})"))
    urls()


def urls() -> None:
    console.print(f"Prefect UI: {server.ui_url()}   MLflow UI: http://127.0.0.1:{MLFLOW_UI_PORT} (`papers ui`)")


@app.command()
def ui(detach: bool = typer.Option(False, help="Leave the MLflow UI running in the background.")) -> None:
    """Serve the MLflow UI and the Prefect UI on 127.0.0.1 and print their URLs."""
    from tasks.core.tracking import tracking_uri

    server.start()
    command = [str(Path(sys.executable).with_name("mlflow")), "ui", "--backend-store-uri", tracking_uri(ROOT),
               "--host", "127.0.0.1", "--port", str(MLFLOW_UI_PORT), "--workers", "1"]
    if detach:
        log = ROOT / "mlflow" / "ui.log"
        log.parent.mkdir(exist_ok=True)
        with open(log, "a") as handle:
            mlflow_ui = subprocess.Popen(command, cwd=ROOT, start_new_session=True, stdout=handle, stderr=subprocess.STDOUT)
        urls()
        console.print(f"MLflow UI running in the background (pid {mlflow_ui.pid}, log {log.relative_to(ROOT)}); "
                      f"stop it with `kill {mlflow_ui.pid}`")
        return
    mlflow_ui = subprocess.Popen(command, cwd=ROOT)
    urls()
    console.print("Ctrl-C stops the MLflow UI (the Prefect server keeps running: `papers server stop`).")
    try:
        mlflow_ui.wait()
    except KeyboardInterrupt:
        mlflow_ui.terminate()


@app.command()
def deploy(paper: str = typer.Argument("se3_sync")) -> None:
    """Register the paper's scheduled deployment (prefect.yaml) with the local server."""
    server.start()
    prefect = str(Path(sys.executable).with_name("prefect"))
    subprocess.run([prefect, "work-pool", "create", "papers-process", "--type", "process", "--overwrite"],
                   cwd=ROOT, check=True, capture_output=True)
    done = subprocess.run([prefect, "--no-prompt", "deploy", "--name", f"{paper}-pipeline"], cwd=ROOT)
    raise typer.Exit(done.returncode)


@server_app.command("start")
def server_start() -> None:
    """Start the server in the background (no-op when it is up)."""
    console.print(f"Prefect server up at {server.start()} (UI {server.ui_url()})")


@server_app.command("stop")
def server_stop() -> None:
    """Stop the server this project started."""
    console.print("Prefect server stopped" if server.stop() else "no Prefect server of this project was running")


@server_app.command("status")
def server_status() -> None:
    """Exit 0 when the server answers, 1 when it does not."""
    if server.is_up():
        console.print(f"Prefect server up at {server.api_url()}")
    else:
        console.print(f"Prefect server down ({server.api_url()})")
        raise typer.Exit(1)
