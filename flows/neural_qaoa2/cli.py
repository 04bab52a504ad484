"""`papers qaoa2 solve`: MaxCut (or a QUBO) of a user's graph by QAOA^2 with any partition policy."""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import typer

from tasks.core.console import console
from tasks.core.io import repo_root
from tasks.core.tracking import client_for, registered_model_file
from tasks.quantum.generator import policy_from_networks
from tasks.quantum.instances import GraphFormatError, read_edge_list, read_qubo
from tasks.quantum.qaoa2 import baseline_policy, qaoa_squared
from tasks.quantum.qubo import assignment_from_sides, qubo_to_maxcut

app = typer.Typer(help="Divide-and-conquer QAOA on your own graphs.", no_args_is_help=True)
err = console(stderr=True)
POLICY_NAMES = ("neural", "kl", "modularity", "boundary", "random")


def neural_policy_for(reference: str, tta_steps: int):
    """Trained networks: a file, or a registered MLflow model name[/version]."""
    path = Path(reference)
    if path.is_file():
        return policy_from_networks(path, tta_steps)
    with tempfile.TemporaryDirectory() as folder:
        return policy_from_networks(registered_model_file(client_for(repo_root()), reference, Path(folder)), tta_steps)


@app.command()
def solve(
    graph_file: Path = typer.Argument(..., help="Weighted edge list 'u v w' per line, 0-based nodes (or a QUBO matrix with --qubo)."),
    policy: str = typer.Option("neural", help=f"One of {', '.join(POLICY_NAMES)}."),
    n_max: int = typer.Option(10, "--n-max", help="Qubits per subgraph (2..16)."),
    qubo: bool = typer.Option(False, "--qubo", help="GRAPH_FILE is a square QUBO matrix Q: maximise x^T Q x."),
    out: Path = typer.Option(None, "--out", help="Write the assignment: 'node side' per line (QUBO: 'variable value')."),
    networks: str = typer.Option("neural_qaoa2-networks", help="Trained networks for --policy neural: a file or a registered model."),
    tta_steps: int = typer.Option(16, help="Test-time adaptation steps of the Neural policy."),
    seed: int = typer.Option(0, help="Seed of partitions, angles and shots."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Run QAOA^2 on GRAPH_FILE and print the cut value and the time."""
    if policy not in POLICY_NAMES:
        raise typer.BadParameter(f"must be one of {', '.join(POLICY_NAMES)}, got {policy!r}", param_hint="--policy")
    if not 2 <= n_max <= 16:
        raise typer.BadParameter(f"must be in 2..16, got {n_max}", param_hint="--n-max")
    try:
        Q = read_qubo(graph_file) if qubo else None
        graph = qubo_to_maxcut(Q) if qubo else read_edge_list(graph_file)
    except (GraphFormatError, OSError) as error:
        err.print(f"[red]error:[/] {error}")
        raise typer.Exit(2) from None
    try:
        chosen = neural_policy_for(networks, tta_steps) if policy == "neural" else baseline_policy(policy)
    except (FileNotFoundError, ValueError) as error:
        err.print(f"[red]error:[/] --networks {networks}: {error} (train them with `papers run neural_qaoa2`, "
                  "or choose another --policy)")
        raise typer.Exit(2) from None
    result = qaoa_squared(graph, chosen, n_max=n_max, rng=np.random.default_rng(seed))
    summary = {"cut": result.cut, "assignment_file": str(out) if out else None, "time_s": result.time_s,
               "policy": policy, "nodes": graph.n, "levels": result.levels}
    if qubo:
        x = assignment_from_sides(result.sides)
        summary["qubo_objective"] = float(x @ Q @ x)
    if out is not None:
        values = assignment_from_sides(result.sides) if qubo else result.sides
        out.write_text("".join(f"{i} {int(v)}\n" for i, v in enumerate(values)))
    if as_json:
        print(json.dumps(summary))
        return
    console().print(f"{policy}: cut {result.cut:g} on {graph.n} nodes in {result.levels} levels, {result.time_s:.3f} s"
                    + (f"; QUBO objective {summary['qubo_objective']:g}" if qubo else "")
                    + (f" -> {out}" if out else ""))
