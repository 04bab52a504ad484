"""`papers mip stop`: solve a user's MIP with SCIP and a trained, calibrated early stopper."""
from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path

import typer

from tasks.core.console import console
from tasks.core.io import repo_root
from tasks.core.tracking import client_for, registered_model_file
from tasks.mip import solver
from tasks.mip.stopper import NetworkStopper, signature_mismatch

app = typer.Typer(help="Early stopping of SCIP with a conformally calibrated gap predictor.", no_args_is_help=True)
err = console(stderr=True)


def resolve_stopper(reference: str, folder: Path) -> Path:
    """A stopper file path, or a registered MLflow model `name` / `name/version`."""
    path = Path(reference)
    if path.is_file():
        return path
    return registered_model_file(client_for(repo_root()), reference, folder)


def original_sense(value: float, sense: int) -> float:
    return value * sense  # trajectories hold minimization-sense values


@app.command()
def stop(
    instance: Path = typer.Argument(..., help="The MIP (any format SCIP reads: MPS, LP, ...)."),
    stopper_ref: str = typer.Option(..., "--stopper", help="Stopper file (data/mip_early_stop/stoppers/F.pt) or "
                                                           "registered model name[/version] (mip_early_stop-F)."),
    alpha: float = typer.Option(None, help="Miscoverage level; default: the one it was calibrated with."),
    sol: Path = typer.Option(None, "--sol", help="Write the incumbent in SCIP's solution format."),
    force: bool = typer.Option(False, help="Use a stopper even if the instance looks like another family."),
    compare: bool = typer.Option(True, help="Also run SCIP to its own tolerance, to report the time saved."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Solve INSTANCE, stopping as soon as the predicted gap falls below the calibrated threshold."""
    if alpha is not None and not 0 < alpha < 1:
        raise typer.BadParameter(f"must be in (0, 1), got {alpha}", param_hint="--alpha")
    with tempfile.TemporaryDirectory() as folder:
        try:
            stopper = NetworkStopper.load(resolve_stopper(stopper_ref, Path(folder)), alpha=alpha)
        except (FileNotFoundError, ValueError) as error:
            err.print(f"[red]error:[/] --stopper {stopper_ref}: {error}")
            raise typer.Exit(2) from None
    meta = stopper.meta
    try:
        model = solver.read_model(instance)
    except solver.MIPReadError as error:
        err.print(f"[red]error:[/] {error}")
        raise typer.Exit(2) from None
    mismatch = signature_mismatch(model, meta["signature"])
    if mismatch and not force:
        err.print(f"[red]error:[/] the stopper was trained for family {meta['family']!r} and {instance} does not look "
                  f"like it: {mismatch}. Use --force to stop with it anyway.")
        raise typer.Exit(2)
    settings = {"family": meta["family"], "bound": meta["bound"], "gap": meta["gap"], "time_limit": meta["time_limit"],
                "sample_dt": meta["sample_dt"]}
    trajectory, solved = solver.solve(instance, stopper=stopper, **settings)
    stopped = trajectory.info["stopped_at"] is not None
    if sol is not None:
        solver.write_solution(solved, sol)
    summary = {
        "instance": str(instance), "family": meta["family"], "status": trajectory.status, "stopped_early": stopped,
        "objective": original_sense(float(trajectory.ub[-1]), trajectory.sense) if trajectory.nsols[-1] else None,
        "dual_bound": original_sense(float(trajectory.lb[-1]), trajectory.sense),
        "solve_time_s": trajectory.solve_time, "alpha": meta["alpha"], "tau": meta["tau"] if math.isfinite(meta["tau"]) else None,
        "predicted_gap": stopper.predictions[-1] if stopper.predictions else None, "solution_file": str(sol) if sol else None,
    }
    if compare:
        full, _ = solver.solve(instance, **settings)
        summary |= {"full_solve_time_s": full.solve_time, "time_saved_s": full.solve_time - trajectory.solve_time,
                    "full_objective": original_sense(float(full.ub[-1]), full.sense)}
    if as_json:
        print(json.dumps(summary))
        return
    out = console()
    if stopped:
        out.print(f"stopped early at {trajectory.wall[trajectory.info['stopped_at']]:.3f} s: predicted gap "
                  f"{summary['predicted_gap']:.4g} < tau {meta['tau']:.4g} (alpha {meta['alpha']}), status {trajectory.status}")
    else:
        out.print(f"no early stop: the predicted gap stayed >= tau ({meta['tau']:.4g}); SCIP ended with {trajectory.status}")
    out.print(f"incumbent {summary['objective']}   dual bound {summary['dual_bound']:.6g}   time {trajectory.solve_time:.3f} s")
    if compare:
        out.print(f"SCIP to its own tolerance: {full.solve_time:.3f} s, objective {summary['full_objective']} -> "
                  f"time saved {summary['time_saved_s']:.3f} s ({summary['time_saved_s'] / full.solve_time:.0%})")
    if sol is not None:
        out.print(f"solution written to {sol}")
