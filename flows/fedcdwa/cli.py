"""`papers fedcdwa simulate`: a federated run of FedCDWA (or a baseline) on the spec's digits federation or on a
user's own split (--data DIR of per-client CSV files), with the in-process engine or on Flower's deployment runtime.
`papers fedcdwa flower-job`: the same run written as a Flower App and job for a real multi-machine SuperLink.

Every option is checked before any work (one line naming the option and the value, exit 2 from `papers`); the
run's options are checked by building its FedConfig, the same rules as the params file's. torch and Flower are
imported only once the options are good, so `--help` starts at once."""
from __future__ import annotations

import json
import math
from pathlib import Path

import typer

from tasks.core.console import console
from tasks.core.inputs import InputError, check_count
from tasks.core.params import ParamsError, validate

from .config import MAX_EPOCHS, MAX_ROUNDS, METHOD_NAMES, FedConfig
from .paper import PAPER

app = typer.Typer(help=PAPER.command.summary,
                  no_args_is_help=True)
ENGINES = ("inprocess", "flower")
MAX_CLIENTS, MAX_FLOWER_CLIENTS = 1000, 32
# A run's work, estimated before it starts and refused past these (a bound on the time, known at once, that does not
# depend on the machine's load as a time limit would, and never a half-trained result): each client's round costs a
# model copy, its prototypes and their aggregation (~15 ms here), each sample pass (a sample through the model once,
# in a local or a personal epoch) ~50 us. At the limits a run takes about 5 and 8 minutes on 2 cores.
MAX_CLIENT_ROUNDS = 20_000  # clients x rounds: 1,000 clients for 20 rounds, the default 10 for 1,000
MAX_SAMPLE_PASSES = 10_000_000  # training samples x (E + E_p) x rounds
OPTION = {"method": "--method", "rounds": "--rounds", "local_epochs": "--local-epochs",
          "personal_epochs": "--local-epochs", "participation": "--participation"}  # FedConfig field -> option (E_p = E)


@app.callback()
def group() -> None:
    """Federated prototype distillation with Wasserstein aggregation (FedCDWA) and its baselines."""


def run_config(method: str, rounds: int, local_epochs: int, participation: float = 1.0) -> FedConfig:
    """The run's FedConfig (spec defaults, E_p = E); its first fault names the option, as the params file names its key."""
    try:
        return validate(FedConfig, {"method": method, "rounds": rounds, "local_epochs": local_epochs,
                                    "personal_epochs": local_epochs, "participation": participation}, prefix="")
    except ParamsError as error:
        field, rule = error.problems[0].split(":", 1)
        raise InputError(f"{OPTION[field]}:{rule}") from None


def check_options(clients: int, alpha: float, engine: str, seed: int, data: Path | None) -> None:
    """The options that are not the run's config: the federation, the engine, the seed."""
    if engine not in ENGINES:
        raise InputError(f"--engine: must be one of {', '.join(ENGINES)}, got {engine!r}")
    if data is None and not 1 <= clients <= MAX_CLIENTS:
        raise InputError(f"--clients: must be in 1..{MAX_CLIENTS}, got {clients}")
    if engine == "flower" and data is None and clients > MAX_FLOWER_CLIENTS:
        raise InputError(f"--clients: the flower engine starts one SuperNode process per client, at most "
                         f"{MAX_FLOWER_CLIENTS} here, got {clients}")
    if not (math.isfinite(alpha) and alpha > 0):
        raise InputError(f"--alpha: must be a finite number > 0, got {alpha}")
    if seed < 0:
        raise InputError(f"--seed: must be >= 0, got {seed}")


def check_work(cfg: FedConfig, clients: int, samples: int | None = None) -> None:
    """The run's estimated work within MAX_CLIENT_ROUNDS and MAX_SAMPLE_PASSES (samples: once the data is read)."""
    check_count(f"--clients x --rounds ({clients:,} x {cfg.rounds:,}; lower either)", clients * cfg.rounds,
                MAX_CLIENT_ROUNDS, " client rounds")
    if samples is not None:  # E epochs every round, E_p after each of the last rounds
        epochs = cfg.rounds * cfg.local_epochs + min(cfg.last_rounds, cfg.rounds) * cfg.personal_epochs
        check_count(f"epochs x training samples ({epochs:,} x {samples:,}; lower --rounds or --local-epochs)",
                    epochs * samples, MAX_SAMPLE_PASSES, " sample passes")


def load_federation(cfg: FedConfig, clients: int, alpha: float, seed: int, data: Path | None, engine: str):
    """The digits federation or the user's CSV split, its work checked against the limits (torch imported here)."""
    from .data import csv_federation, digits_federation, digits_partition

    federation = csv_federation(data, seed) if data is not None else digits_federation(digits_partition(clients, alpha, seed))
    check_work(cfg, len(federation.clients), sum(len(client.y_train) for client in federation.clients))
    if engine == "flower" and len(federation.clients) > MAX_FLOWER_CLIENTS:
        raise InputError(f"--data {data}: {len(federation.clients)} clients, the flower engine takes at most "
                         f"{MAX_FLOWER_CLIENTS} here")
    return federation


CLIENTS = typer.Option(10, help=f"K clients of the digits federation (1..{MAX_CLIENTS}; ignored with --data).")
ALPHA = typer.Option(0.5, help="Dirichlet label-skew concentration (> 0; smaller = more heterogeneous).")
ROUNDS = typer.Option(30, help=f"Communication rounds (1..{MAX_ROUNDS}).")
LOCAL_EPOCHS = typer.Option(2, "--local-epochs", help=f"Local epochs E = E_p per round (1..{MAX_EPOCHS}).")
METHOD = typer.Option("fedcdwa", help=f"One of {', '.join(METHOD_NAMES)}.")
PARTICIPATION = typer.Option(1.0, help="Share of the clients sampled each round, in (0, 1] (1 = every client).")
DATA = typer.Option(None, "--data", help="Your own split: a folder of client_*.csv files (natural order: client_2 "
                                         "before client_10) and test.csv, each with a header 'label,f1,f2,...'; "
                                         "labels are any text, mapped to classes in sorted order (numeric when all "
                                         "are integers).")
SEED = typer.Option(0, help="Seed of the split, the initial model and every client's batches (>= 0).")


@app.command()
def simulate(
    clients: int = CLIENTS, alpha: float = ALPHA, rounds: int = ROUNDS, local_epochs: int = LOCAL_EPOCHS,
    method: str = METHOD, participation: float = PARTICIPATION,
    engine: str = typer.Option("inprocess", help="inprocess (deterministic loop) or flower (a SuperLink and one "
                                                 "SuperNode per client on 127.0.0.1; same numbers, ~x12 the time)."),
    data: Path = DATA, seed: int = SEED,
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Run one federated training and print global and personalised accuracy (means over the last rounds) and bytes
    per round."""
    cfg = run_config(method, rounds, local_epochs, participation)
    check_options(clients, alpha, engine, seed, data)
    if data is None:
        check_work(cfg, clients)
    federation = load_federation(cfg, clients, alpha, seed, data, engine)
    from .engine import result_record, run_inprocess

    if engine == "flower":
        from .flower import run_flower

        record = run_flower(cfg, federation, seed)
    else:
        record = result_record(run_inprocess(cfg, federation, seed))
    summary = {"method": method, "engine": engine, "clients": len(federation.clients),
               "alpha": None if data is not None else alpha, "rounds": rounds, "participation": participation,
               "global_accuracy": record["global_accuracy"], "personal_accuracy": record["personal_accuracy"],
               "bytes_up_per_round": record["bytes_up_per_round"], "bytes_down_per_round": record["bytes_down_per_round"],
               "wall_time_s": record["wall_time_s"], "weights_sha256": record["weights_sha256"]}
    if as_json:
        print(json.dumps(summary))
        return
    console().print(f"{method} ({engine}, {summary['clients']} clients, {rounds} rounds): global accuracy "
                    f"{summary['global_accuracy']:.4f}, personalised {summary['personal_accuracy']:.4f} (means over "
                    f"the last rounds), {summary['bytes_up_per_round'] / 1e3:.1f} kB up / "
                    f"{summary['bytes_down_per_round'] / 1e3:.1f} kB down per round, {summary['wall_time_s']:.1f} s")


@app.command("flower-job")
def flower_job(
    superlink: str = typer.Option(..., help="The SuperLink's Control API address HOST:PORT (`flwr run` connects "
                                            "there; Flower's default port is 9093)."),
    out: Path = typer.Option(..., help="A new (or empty) folder to write the job into; never a symbolic link."),
    force: bool = typer.Option(False, "--force", help="Write into a non-empty folder (replacing this job's files)."),
    root_certificates: Path = typer.Option(None, "--root-certificates", help="The CA (PEM) that signed the "
                                                                             "SuperLink's certificate."),
    insecure: bool = typer.Option(False, "--insecure", help="No TLS (a trusted network only)."),
    clients: int = CLIENTS, alpha: float = ALPHA, rounds: int = ROUNDS, local_epochs: int = LOCAL_EPOCHS,
    method: str = METHOD, participation: float = PARTICIPATION, data: Path = DATA, seed: int = SEED,
) -> None:
    """Write a Flower App and job for a real multi-machine SuperLink (one SuperNode per client) and print where
    its RUN.md is; nothing is started."""
    from .flower_job import check_address, check_certificate, check_job_folder, write_job

    cfg = run_config(method, rounds, local_epochs, participation)
    check_options(clients, alpha, "inprocess", seed, data)  # not the local engine's process limit: real machines
    check_address(superlink)
    check_job_folder(out, force)
    if insecure and root_certificates is not None:
        raise InputError("--insecure: no TLS, so --root-certificates has no use; give one or the other")
    check_certificate(root_certificates)
    if data is None:
        check_work(cfg, clients)
    federation = load_federation(cfg, clients, alpha, seed, data, "inprocess")
    run = write_job(out, cfg, federation, seed, superlink, root_certificates, insecure, force)
    console().print(f"Flower job for {len(federation.clients)} clients written to {out}; the commands: {run}")
