"""`papers mip-early-stop stop`: solve a user's MIP with SCIP and a trained, calibrated early stopper.

Reading order: `stop` checks every input before any solve (the --sol folder, the instance file,
the stopper bundle, then the instance as SCIP reads it, in a child process), solves in child
processes (tasks/mip/isolated.py: a crash or hang of SCIP is one line, exit 2), and `summarize`
turns SCIP's own results into the report. A user's mistake raises InputError, which `papers`
prints as one line with exit 2.

torch (the stopper) and mlflow (a registered model) are imported inside the command, so that
`papers mip-early-stop stop --help` starts in a fraction of a second.
"""
from __future__ import annotations

import json
import math
import tempfile
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from tasks.core.console import console
from tasks.core.inputs import InputError, check_number, check_output, check_readable
from tasks.core.io import staged_output
from tasks.mip import isolated

from .paper import PAPER

if TYPE_CHECKING:
    from tasks.mip.stopper import NetworkStopper

# rich_markup_mode=None: help texts are printed as written ("[--alpha A]" is not rich markup).
app = typer.Typer(help=PAPER.command.summary, no_args_is_help=True,
                  rich_markup_mode=None)

# What a stopper bundle's meta holds (flows/mip_early_stop/pipeline.py, calibrate) and this command reads.
STOPPER_META = ("family", "bound", "gap", "time_limit", "sample_dt", "signature", "scores", "alpha")
EXPECTED = "expected a stopper bundle from the calibrate stage (data/mip_early_stop/stoppers/FAMILY.pt)"
FINISHED = ("optimal", "gaplimit")  # SCIP reached its own tolerance: a full solve to compare with


def load_stopper(path: Path, reference: str, alpha: float | None) -> NetworkStopper:
    """The stopper bundle at `path`, or InputError naming the file and what was expected."""
    import torch

    from tasks.mip.stopper import NetworkStopper

    what = f"--stopper {reference}" + (f" ({path})" if str(path) != reference else "")
    check_readable(path, "--stopper")
    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)
    except Exception:  # noqa: BLE001 - torch's unpickler raises whatever arbitrary bytes make it hit
        raise InputError(f"{what}: not a torch file; {EXPECTED}") from None
    if not (isinstance(blob, dict) and {"state_dict", "config", "normalizer", "meta"} <= set(blob)):
        raise InputError(f"{what}: a torch file, but not a model of this paper; {EXPECTED}")
    missing = [key for key in STOPPER_META if key not in blob["meta"]]
    if "scores" in missing:
        raise InputError(f"{what}: a trained model without calibration scores; {EXPECTED}, not data/mip_early_stop/models/")
    if missing:
        raise InputError(f"{what}: the bundle's meta lacks {', '.join(missing)}; {EXPECTED}")
    try:
        return NetworkStopper.load(path, alpha=alpha)
    except (RuntimeError, ValueError, KeyError, TypeError) as error:
        first = (str(error).splitlines() or [type(error).__name__])[0]
        raise InputError(f"{what}: its network does not load ({first}); {EXPECTED}") from None


def in_range(value: float | None, bound: float) -> bool:
    return value is None or abs(value) < bound


def summarize(instance: Path, stopper: NetworkStopper, stopped: isolated.Solve, full: isolated.Solve | None,
              solution: Path | None) -> dict:
    """The report: SCIP's own status, objective and dual bound; the early stop credited only inside
    the stopper's feature range (-B, B); time saved only when both solves reached a comparable end."""
    meta = stopper.meta
    bound = float(meta["bound"])
    features_in_range = in_range(stopped.objective, bound) and in_range(stopped.dual_bound, bound)
    summary = {
        "instance": str(instance), "family": meta["family"], "status": stopped.status,
        "objective": stopped.objective, "dual_bound": stopped.dual_bound, "solve_time_s": stopped.solve_time,
        "stopped_early": stopped.stopped_at_s is not None, "stopped_at_s": stopped.stopped_at_s,
        "stopper_in_range": features_in_range, "stopper_bound": bound,
        "alpha": meta["alpha"], "tau": stopped.tau, "tau_defined": stopper.can_fire,
        "predicted_gap": stopped.predicted_gap, "stopper_overhead_s": stopped.overhead_s,
        "inference_s": stopped.inference_s, "solution_file": str(solution) if stopped.solution_written else None,
    }
    if full is not None:
        comparable = (features_in_range and full.status in FINISHED and full.objective is not None
                      and stopped.objective is not None)
        summary |= {"full_status": full.status, "full_objective": full.objective, "full_solve_time_s": full.solve_time,
                    "full_handler_overhead_s": full.overhead_s,
                    "time_saved_s": full.solve_time - stopped.solve_time if comparable else None}
    return summary


def chosen_stopper(reference: str, shape: isolated.Instance, instance: Path, alpha: float | None, force: bool,
                   folder: Path) -> tuple[Path, NetworkStopper]:
    """The stopper `--stopper` names, refused (but with --force) for an instance unlike its family's."""
    from tasks.core.tracking import resolve_model  # mlflow and torch: only once the cheap checks passed
    from tasks.mip.stopper import signature_mismatch

    path = Path(reference)
    if path.suffix == ".pt" or path.exists():  # a file, not a registry name
        check_readable(path, "--stopper")
    path = resolve_model(reference, folder)
    stopper = load_stopper(path, reference, alpha)
    mismatch = signature_mismatch(shape, stopper.meta["signature"])
    if mismatch and not force:
        raise InputError(f"instance {instance}: the stopper was trained for family {stopper.meta['family']!r} and "
                         f"this does not look like it ({mismatch}); --force stops it anyway")
    return path, stopper


def default_stopper(shape: isolated.Instance, instance: Path, alpha: float | None,
                    folder: Path) -> tuple[Path, NetworkStopper]:
    """The stopper of the first family of the default profile whose training instances this one looks like."""
    from tasks.core.tracking import resolve_model
    from tasks.mip.stopper import signature_mismatch

    unlike = []
    for family in default_families():
        reference = f"mip_early_stop-{family}"
        try:
            path = resolve_model(reference, folder / family)
        except InputError as error:
            unlike.append(f"{family}: {error}")
            continue
        stopper = load_stopper(path, reference, alpha)
        mismatch = signature_mismatch(shape, stopper.meta["signature"])
        if mismatch is None:
            return path, stopper
        unlike.append(f"{family}: {mismatch}")
    raise InputError(f"instance {instance}: no stopper of the default profile's families serves it ({'; '.join(unlike)}); "
                     "choose one with --stopper (and --force), or train them with `papers run mip_early_stop`")


def default_families() -> list[str]:
    """The families the default profile trains stoppers for (stages/mip_early_stop/params.yaml)."""
    from tasks.core.io import repo_root
    from tasks.core.params import load_paper_params

    from .params import Params

    return [family.name for family in load_paper_params(repo_root(Path(__file__).parent), "mip_early_stop",
                                                        "default", Params).families]


@app.command()
def stop(
    instance: Path = typer.Argument(..., help=f"The MIP, a file SCIP reads: {', '.join(isolated.FORMATS)} "
                                              "(also .gz, e.g. .mps.gz)."),
    stopper_ref: str = typer.Option(None, "--stopper", help="Stopper file (data/mip_early_stop/stoppers/F.pt) or a "
                                                            "registered model: NAME, NAME/VERSION or NAME@ALIAS "
                                                            "(mip_early_stop-F). Default: the stopper of the default "
                                                            "profile's family that the instance looks like (this "
                                                            "checkout's MLflow store, else the clone's committed one)."),
    alpha: float = typer.Option(None, help="Miscoverage level in (0, 1); default: the one it was calibrated with."),
    sol: Path = typer.Option(None, "--sol", help="Write the incumbent in SCIP's solution format."),
    force: bool = typer.Option(False, help="Use a stopper even if the instance looks like another family."),
    compare: bool = typer.Option(True, help="Also run SCIP to its own tolerance, to report the time saved."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Solve INSTANCE, stopping as soon as the predicted gap falls below the calibrated threshold."""
    if alpha is not None:
        check_number("--alpha", alpha, above=0, below=1)
    if sol is not None:
        check_output(sol, "--sol", inputs={"instance": instance} | ({"--stopper": Path(stopper_ref)} if stopper_ref else {}))
    path = isolated.check_instance(instance)
    shape = isolated.read(path)
    with tempfile.TemporaryDirectory() as folder:
        if stopper_ref is None:
            stopper_path, stopper = default_stopper(shape, instance, alpha, Path(folder))
        else:
            stopper_path, stopper = chosen_stopper(stopper_ref, shape, instance, alpha, force, Path(folder))
        meta = stopper.meta
        settings = {key: meta[key] for key in ("family", "bound", "gap", "time_limit", "sample_dt")}
        settings["node_limit"] = meta.get("node_limit")  # None in bundles calibrated before node limits
        with staged_output(sol, "--sol") if sol else nullcontext() as solution:
            stopped = isolated.solve(path, **settings, stopper=stopper_path, alpha=meta["alpha"], solution=solution,
                                     read_s=shape.read_s)
            if solution and not stopped.solution_written:
                solution.unlink()  # no incumbent: staged_output then leaves --sol as it was
    full = isolated.solve(path, **settings, read_s=shape.read_s) if compare else None
    summary = summarize(instance, stopper, stopped, full, sol)
    if as_json:
        print(json.dumps(summary))
        return
    report(summary, meta, sol)


def report(summary: dict, meta: dict, sol: Path | None) -> None:
    out = console()
    out.soft_wrap = True  # one line per fact, however long
    status, bound = summary["status"], summary["stopper_bound"]
    if not summary["tau_defined"]:
        out.print(f"tau is undefined: {len(meta['scores'])} calibration scores are too few for alpha {meta['alpha']} "
                  f"(it needs at least {math.ceil(1 / meta['alpha']) - 1}), so the stopper never fires and this is "
                  f"SCIP's own solve; SCIP status {status}")
    elif status in isolated.STATUSES_WITHOUT_OBJECTIVE:
        out.print(f"SCIP status {status}: the model has no optimal objective, so no early stop and no time saved")
    elif summary["stopped_early"]:
        out.print(f"stopped early at {summary['stopped_at_s']:.3f} s: predicted gap {summary['predicted_gap']:.4g} "
                  f"< tau {meta['tau']:.4g} (alpha {meta['alpha']}); SCIP status {status}")
    elif not summary["stopper_in_range"]:
        out.print(f"no early stop: the objective or dual bound is beyond the stopper's feature range |value| < {bound:g} "
                  f"(family {meta['family']!r}), where its predictions mean nothing; SCIP status {status}")
    else:
        out.print(f"no early stop: the stopper never fired before SCIP reached its own tolerance (tau {meta['tau']:.4g}); "
                  f"SCIP status {status}")
    dual = "none" if summary["dual_bound"] is None else f"{summary['dual_bound']:.10g}"
    objective = "none" if summary["objective"] is None else f"{summary['objective']:.10g}"
    out.print(f"objective {objective}   dual bound {dual}   time {summary['solve_time_s']:.3f} s "
              f"(stopper overhead {summary['stopper_overhead_s']:.3f} s, of which inference {summary['inference_s']:.3f} s)")
    if "full_status" in summary:
        full_objective = "none" if summary["full_objective"] is None else f"{summary['full_objective']:.10g}"
        line = (f"SCIP to its own tolerance: status {summary['full_status']}, objective {full_objective}, "
                f"{summary['full_solve_time_s']:.3f} s (sampling handler {summary['full_handler_overhead_s']:.3f} s)")
        if summary["time_saved_s"] is not None and summary["full_solve_time_s"] > 0:
            saved = summary["time_saved_s"]
            line += f" -> time saved {saved:.3f} s ({saved / summary['full_solve_time_s']:.0%})"
        else:
            line += " -> no time-saved figure (the two solves did not end comparably)"
        out.print(line)
    if sol is not None:
        out.print(f"solution written to {sol}" if summary["solution_file"] else f"no solution to write to {sol}")
