"""`papers neural-qaoa2 solve`: MaxCut (or a QUBO) of a user's graph by QAOA^2 with any partition policy.

Every input is checked before any work: the options, the output folder, the graph (node ids,
edge count and weights against the limits in tasks/quantum/instances.py), then the networks.
A bad one is an InputError (one line, exit 2 from `papers`). torch (the networks) and the QAOA
simulation are imported inside the command, so that `papers neural-qaoa2 solve --help` starts at once.
"""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import typer

from tasks.core.console import console
from tasks.core.inputs import InputError, check_choice, check_output, check_range
from tasks.core.io import staged_output
from tasks.quantum.instances import MAX_NODES, MAX_QUBO_VARIABLES, read_edge_list, read_qubo
from tasks.quantum.qubo import assignment_from_sides, qubo_to_maxcut

from .paper import PAPER

app = typer.Typer(help=PAPER.command.summary, no_args_is_help=True)
POLICY_NAMES = ("neural", "kl", "modularity", "boundary", "random")
# The default profile's evidence (stages/neural_qaoa2/README.md): KL has the most first places and the best
# mean rho of the five policies, Neural does not beat it; so KL is what a user gets without asking.
DEFAULT_POLICY = "kl"
MAX_TTA_STEPS = 10_000
TRAIN_HINT = "train them with `papers run neural_qaoa2`, or choose another --policy"


def neural_policy_for(reference: str, tta_steps: int, serves: tuple[int, int] | None = None):
    """Trained networks: a file, or a registered MLflow model NAME, NAME/VERSION or NAME@ALIAS (else the clone's
    committed default); `serves` (nodes, n_max) is checked against the networks' width before any work."""
    from tasks.quantum.generator import policy_from_networks  # imports torch: after the checks of the options

    if Path(reference).is_file():
        return policy_from_networks(Path(reference), tta_steps, serves)
    if Path(reference).suffix in (".pt", ".pth"):  # meant as a file: do not look it up in the registry
        raise InputError(f"--networks {reference}: no such file; {TRAIN_HINT}")
    from tasks.core.tracking import resolve_model  # imports mlflow: only for a registered model

    with tempfile.TemporaryDirectory() as folder:
        try:
            path = resolve_model(reference, Path(folder))
        except InputError as error:
            raise InputError(f"--networks: {error}; {TRAIN_HINT}") from None
        return policy_from_networks(path, tta_steps, serves)


def check_options(policy: str, n_max: int, tta_steps: int, seed: int) -> None:
    check_choice("--policy", policy, POLICY_NAMES)
    check_range("--n-max", n_max, low=2, high=16)
    check_range("--tta-steps", tta_steps, low=0, high=MAX_TTA_STEPS)
    check_range("--seed", seed, low=0)


@app.command()
def solve(
    graph_file: Path = typer.Argument(..., help=f"Weighted edge list 'u v w' per line, 0-based nodes below {MAX_NODES:,} "
                                           f"(or a QUBO matrix of at most {MAX_QUBO_VARIABLES:,} rows with --qubo)."),
    policy: str = typer.Option(DEFAULT_POLICY, help=f"One of {', '.join(POLICY_NAMES)}. Default {DEFAULT_POLICY}: recursive "
                               "Kernighan-Lin had the most first places and the best mean performance ratio in the "
                               "default profile's evaluation, ahead of the trained Neural policy."),
    n_max: int = typer.Option(10, "--n-max", help="Qubits per subgraph (2..16)."),
    qubo: bool = typer.Option(False, "--qubo", help="GRAPH_FILE is a square QUBO matrix Q: maximise x^T Q x."),
    out: Path = typer.Option(None, "--out", help="Write the assignment: 'node side' per line (QUBO: 'variable value')."),
    networks: str = typer.Option("neural_qaoa2-networks", help="Trained networks for --policy neural: a file, or a "
                                 "registered model NAME, NAME/VERSION or NAME@ALIAS (a name this checkout's MLflow "
                                 "store lacks: the clone's committed default)."),
    tta_steps: int = typer.Option(16, help=f"Test-time adaptation steps of the Neural policy (0..{MAX_TTA_STEPS:,})."),
    seed: int = typer.Option(0, help="Seed of partitions, angles and shots (>= 0)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Run QAOA^2 on GRAPH_FILE and print the cut value and the time."""
    check_options(policy, n_max, tta_steps, seed)
    if out is not None:
        inputs = {"GRAPH_FILE": graph_file} | ({"--networks": Path(networks)} if policy == "neural" else {})
        check_output(out, "--out", inputs=inputs)
    Q = read_qubo(graph_file) if qubo else None
    graph = qubo_to_maxcut(Q) if qubo else read_edge_list(graph_file)
    from tasks.quantum.qaoa2 import baseline_policy, qaoa_squared  # networkx: once the graph is read

    serves = (graph.n, n_max)
    chosen = neural_policy_for(networks, tta_steps, serves) if policy == "neural" else baseline_policy(policy)
    result = qaoa_squared(graph, chosen, n_max=n_max, rng=np.random.default_rng(seed))
    summary = {"cut": result.cut, "assignment_file": str(out) if out else None, "time_s": result.time_s,
               "policy": policy, "nodes": graph.n, "levels": result.levels}
    if qubo:
        x = assignment_from_sides(result.sides)
        summary["qubo_objective"] = float(x @ Q @ x)
    if out is not None:
        values = assignment_from_sides(result.sides) if qubo else result.sides
        with staged_output(out, "--out") as temporary:
            temporary.write_text("".join(f"{i} {int(v)}\n" for i, v in enumerate(values)))
    if as_json:
        print(json.dumps(summary))
        return
    console().print(f"{policy}: cut {result.cut:g} on {graph.n} nodes in {result.levels} levels, {result.time_s:.3f} s"
                    + (f"; QUBO objective {summary['qubo_objective']:g}" if qubo else "")
                    + (f" -> {out}" if out else ""))
