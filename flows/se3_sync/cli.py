"""`papers se3-sync solve`: synchronize a user's pose graph (g2o) with DQGPM or a baseline.

The method and the output folder are checked before the graph is read, and the graph (format,
magnitudes, connectivity: tasks/sync/g2o.py) before any solving; a bad input is an InputError.
The reader and the solvers (scipy) are imported inside the command, so that --help starts at once.
The reported time is the one-shot time: from the graph in memory to the poses, loading the method's
code included (numba's JIT start when the ahead-of-time kernels are not built, ARPACK for EIG).
"""
from __future__ import annotations

import json
from pathlib import Path
from time import perf_counter

import numpy as np
import typer

from tasks.core.console import console as make_console
from tasks.core.inputs import check_choice, check_number, check_output
from tasks.core.io import staged_output
from tasks.sync.graph import Poses

from .paper import PAPER

app = typer.Typer(help=PAPER.command.summary, no_args_is_help=True)
NAMES = {"dqgpm": "dqgpm", "spectral": "dq_spectral", "eig": "eig", "chain": "chain"}
INITS = ("spectral", "tree")


def anchor(estimate_T: Poses, initial_T: Poses) -> Poses:
    """Fix the gauge so the first vertex keeps its input pose (g2o files have no other anchor)."""
    # T_i -> A T_i with A = T0_init T0_est^{-1}: one rigid motion of the whole map.
    R_a = initial_T.R[0] @ estimate_T.R[0].T
    t_a = initial_T.t[0] - R_a @ estimate_T.t[0]
    return Poses(np.einsum("ij,njk->nik", R_a, estimate_T.R), estimate_T.t @ R_a.T + t_a)


def method_options(method: str, tol: float | None, init: str) -> dict:
    """The solver options the command line sets: the per-node tolerance of the DQ methods, DQGPM's start."""
    options = {"rot_tol": tol, "trans_tol": tol} if tol is not None and method in ("dqgpm", "dq_spectral") else {}
    return options | ({"init": init} if method == "dqgpm" else {})


@app.command()
def solve(
    g2o: Path = typer.Option(..., "--g2o", help="Input pose graph (VERTEX_SE3:QUAT, EDGE_SE3:QUAT)."),
    out: Path = typer.Option(..., "--out", help="Where to write the synchronized graph (g2o)."),
    method: str = typer.Option("dqgpm", help="dqgpm, spectral, eig or chain."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as one JSON object."),
    tol: float = typer.Option(None, "--tol", help="dqgpm/spectral: per-node stopping tolerance (rotation change, "
                                                  "translation change / scene scale); default 1e-6."),
    init: str = typer.Option("spectral", "--init", help="dqgpm's start: spectral (power method) or tree (composition "
                                                        "along a spanning tree; for chain-like SLAM graphs)."),
) -> None:
    """Synchronize the poses of IN.g2o from its relative measurements and write OUT.g2o."""
    check_choice("--method", method, NAMES)
    check_choice("--init", init, INITS)
    if tol is not None:
        check_number("--tol", tol, above=0, below=1)
    check_output(out, "--out", inputs={"--g2o": g2o})
    from tasks.sync.g2o import invert_poses, read_g2o, write_g2o

    loaded = read_g2o(g2o)  # a disconnected graph is refused here, not silently solved
    start = perf_counter()
    from tasks.sync.methods import METHODS

    result = METHODS[NAMES[method]](loaded.graph, **method_options(NAMES[method], tol, init))
    one_shot = perf_counter() - start
    poses_T = anchor(invert_poses(result.poses), loaded.T)  # our G_i = T_i^{-1} (see tasks/sync/g2o.py)
    with staged_output(out, "--out") as temporary:
        write_g2o(temporary, loaded.vertex_ids, poses_T, loaded.graph.edges, loaded.graph.Z)
    summary = {"method": NAMES[method], "vertices": loaded.graph.n, "edges": len(loaded.graph.edges),
               "iterations": result.iterations, "converged": result.converged, "time_s": one_shot,
               "solve_s": result.wall_time, "kernels": result.info.get("kernels"), "out": str(out)}
    if as_json:
        print(json.dumps(summary))
    else:
        make_console().print(f"{summary['method']}: {summary['vertices']} poses, {summary['edges']} edges, "
                        f"{summary['iterations']} iterations, {summary['time_s']:.4f} s -> {out}")
        if not result.converged:
            make_console().print(f"warning: {result.message}")
        if result.info.get("kernels") == "jit":
            make_console().print("note: the DQ kernels ran on numba's JIT (0.2-1 s of start-up a process); "
                                 "`python -m tasks.sync.aot` builds them ahead of time, once")
