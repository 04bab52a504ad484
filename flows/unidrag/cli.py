"""`papers unidrag cfd`: validate the lattice-Boltzmann solver against published reference values.
`papers unidrag`: predict and minimise the drag of a user's vehicle mesh with the UniDrag surrogate.

Every option, output path, mesh and model is checked before any work (the lattice size against
MAX_LATTICE_CELLS before it is allocated); a bad one is a one-line error and exit 2 from `papers`.
Default files come from the project `papers` runs in (PAPERS_ROOT), whatever the working folder.
The solver, the surrogate and torch are imported inside the commands, so that --help starts at once.
"""
from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path

import typer
from rich.table import Table

from tasks.core.console import console
from tasks.core.device import resolve_device, single_torch_thread
from tasks.core.inputs import InputError, check_output, check_readable
from tasks.core.io import repo_root, staged_output

from .paper import PAPER

cfd_app = typer.Typer(help="Lattice-Boltzmann solver validation cases.", no_args_is_help=True)
CYLINDER_KEYS = ("cd_mean", "cd_max", "cl_max", "dp", "recirculation_length", "strouhal")
MAX_LATTICE_CELLS = 16_000_000  # D3Q19 in float32: ~2.4 GB of populations, twice over
MAX_STEPS = 10_000_000  # the per-step force trace is allocated up front
# The choices of tasks/cfd/lbm_setup.py (COLLISIONS, DTYPES) as --help names them without importing torch;
# the commands check against lbm_setup's own, and a test keeps the two equal.
COLLISION_CHOICES = ("bgk", "trt", "regularized")
DTYPE_CHOICES = ("float32", "float64")


def project_root() -> Path:
    """The project the `papers` command found (PAPERS_ROOT), else the one this code lives in."""
    return Path(os.environ.get("PAPERS_ROOT") or repo_root(Path(__file__).parent))


def _check_choice(value: str, allowed: tuple[str, ...], hint: str) -> None:
    if value not in allowed:
        raise InputError(f"{hint}: must be one of {', '.join(allowed)}, got {value!r}")


def _check_lattice(re: float, diameter_cells: int, lattice_cells, steps: int | None, min_steps: int, device: str) -> str:
    """Refuse bad case options before anything is allocated (lattice_cells(D): the case's lattice
    size at D cells per diameter); the resolved device."""
    if not (math.isfinite(re) and re > 0):
        raise InputError(f"--re: must be a finite number > 0, got {re}")
    if diameter_cells < 4:
        raise InputError(f"--diameter-cells: must be >= 4, got {diameter_cells}")
    cells = lattice_cells(diameter_cells) if diameter_cells <= MAX_LATTICE_CELLS else None  # else over anyway
    if cells is None or cells > MAX_LATTICE_CELLS:
        largest = max(d for d in range(4, 1000) if lattice_cells(d) <= MAX_LATTICE_CELLS)
        size = f"{cells:,}" if cells else f"more than {MAX_LATTICE_CELLS:,}"
        raise InputError(f"--diameter-cells: {diameter_cells} gives a lattice of {size} cells, over the limit of "
                         f"{MAX_LATTICE_CELLS:,} cells (at most {largest} here)")
    if steps is not None and not min_steps <= steps <= MAX_STEPS:
        raise InputError(f"--steps: must be in {min_steps}..{MAX_STEPS:,}, got {steps}")
    if device != "auto" and device != "cpu" and not device.startswith("cuda"):
        raise InputError(f"--device: must be auto, cpu or cuda[:N], got {device!r}")
    try:
        return resolve_device(device)
    except ValueError as error:
        raise InputError(f"--device: {error}") from None


def _print_table(title: str, ours: dict, reference: dict, errors: dict) -> None:
    table = Table(title=title)
    for column in ("quantity", "ours", "reference", "error"):
        table.add_column(column, justify="right" if column != "quantity" else "left")
    fmt = lambda v: "-" if v is None else f"{v:.4f}"
    for key, value in ours.items():
        error = errors.get(key)
        table.add_row(key, fmt(value), fmt(reference.get(key)), "-" if error is None else f"{100 * error:+.1f}%")
    console().print(table)


@cfd_app.command()
def cylinder(
    re: float = typer.Option(20.0, "--re", help="Reynolds number U_mean D / nu (20: case 2D-1, 100: case 2D-2)."),
    diameter_cells: int = typer.Option(10, "--diameter-cells", help="Cylinder diameter in lattice cells (>= 4)."),
    steps: int = typer.Option(None, "--steps", help="Time steps (default 1000 D steady, 4000 D shedding)."),
    halfway: bool = typer.Option(False, "--halfway", help="Half-way bounce-back instead of interpolated (Bouzidi): "
                                 "10% off the 2D-2 Cd max at D = 20, Bouzidi 2.4%."),
    collision: str = typer.Option("bgk", help=f"One of {', '.join(COLLISION_CHOICES)}."),
    u_max: float = typer.Option(0.1, "--u-max", help="Peak inflow speed in lattice units."),
    dtype: str = typer.Option("float32", help=f"One of {', '.join(DTYPE_CHOICES)}."),
    device: str = typer.Option("auto", help="auto, cpu or cuda."),
    engine: str = typer.Option("auto", help="auto (numba on the CPU, torch on a GPU), numba, torch or cuda (fused "
                               "GPU kernels: needs a GPU and `pip install -e \".[gpu]\"`)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Schafer-Turek cylinder in a channel: Cd, Cl, pressure difference, recirculation length (or
    Strouhal number) next to the reference values."""
    from tasks.cfd.lbm_setup import BOUNCE_BACKS, COLLISIONS, DTYPES, ENGINES
    from tasks.cfd.validation import cylinder_channel, schafer_turek_cylinder

    _check_choice(collision, COLLISIONS, "--collision")
    _check_choice(dtype, DTYPES, "--dtype")
    _check_choice(engine, ENGINES, "--engine")
    device = _check_lattice(re, diameter_cells, lambda d: math.prod(cylinder_channel(d)[0]), steps, 10, device)
    if not (math.isfinite(u_max) and 0 < u_max < 0.6):
        raise InputError(f"--u-max: must be in (0, 0.6) lattice units, got {u_max}")
    single_torch_thread()
    try:
        result = schafer_turek_cylinder(re, diameter_cells, steps, BOUNCE_BACKS[0] if halfway else BOUNCE_BACKS[1],
                                        collision, u_max, dtype, device, engine)
    except ValueError as error:  # the solver's own check of the case (e.g. tau <= 0.5 at too high a Re)
        raise InputError(f"cfd cylinder: {error}") from None
    if as_json:
        print(json.dumps({key: result[key] for key in CYLINDER_KEYS} | {"details": result}))
        return
    _print_table(f"Schafer-Turek cylinder, Re {re:g}, D = {diameter_cells} cells, {result['steps']} steps, "
                 f"{result['bounce_back']}, {result['engine']} engine ({result['mlups']:.1f} MLUPS)",
                 {key: result[key] for key in ("cl_mean", *CYLINDER_KEYS)}, result["reference"] or {},
                 result["relative_error"])


@cfd_app.command()
def sphere(
    re: float = typer.Option(20.0, "--re", help="Reynolds number U D / nu (Schiller-Naumann holds for Re < 800)."),
    diameter_cells: int = typer.Option(8, "--diameter-cells", help="Sphere diameter in lattice cells (>= 4)."),
    steps: int = typer.Option(None, "--steps", help="Time steps (default: three flow-throughs of the box)."),
    halfway: bool = typer.Option(False, "--halfway", help="Half-way bounce-back instead of Bouzidi."),
    device: str = typer.Option("auto", help="auto, cpu or cuda."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """D3Q19 sphere drag at low Re against the Schiller-Naumann correlation."""
    from tasks.cfd.validation import sphere_drag

    device = _check_lattice(re, diameter_cells, lambda d: 12 * 6 * 6 * d**3, steps, 1, device)  # sphere_drag's box
    single_torch_thread()
    try:
        result = sphere_drag(re, diameter_cells, steps, bounce_back="halfway" if halfway else "bouzidi", device=device)
    except ValueError as error:  # the solver's own check of the case (e.g. tau <= 0.5 at too high a Re)
        raise InputError(f"cfd sphere: {error}") from None
    if as_json:
        print(json.dumps(result))
        return
    _print_table(f"Sphere, Re {re:g}, D = {diameter_cells} cells, {result['steps']} steps ({result['mlups']:.1f} MLUPS)",
                 {"cd": result["cd"]}, {"cd": result["reference_cd"]}, {"cd": result["relative_error"]})


# ---------------------------------------------------------------- `papers unidrag`: a user's mesh

app = typer.Typer(help=PAPER.command.summary, no_args_is_help=True)
app.add_typer(cfd_app, name="cfd")
REGISTERED_MODEL = "unidrag-surrogate"
MESH_HELP = "Closed (watertight) STL/OBJ/PLY mesh, +x streamwise, z up (see stages/unidrag/README.md for the frame)."
MODEL_HELP = (f"Saved surrogate: a file, or a registered model NAME, NAME/VERSION or NAME@ALIAS; default: "
              f"{REGISTERED_MODEL} of this checkout's MLflow store, else the clone's committed default.")
MESH_SUFFIXES = (".stl", ".obj", ".ply", ".off")  # what the deformed mesh can be written as
MAX_OPT_STEPS = 10_000
MAX_TRANSFORMATIONS = 256


def _load(mesh_file: Path, model: str | None):
    """(user shape, trained surrogate): the mesh first (cheap to refuse), then the model."""
    from flows.unidrag.surrogates import load_surrogate
    from tasks.cfd.user_mesh import read_user_shape

    shape = read_user_shape(mesh_file)
    model = model or REGISTERED_MODEL
    if Path(model).is_file():
        return shape, load_surrogate(Path(model))
    if Path(model).suffix in (".pt", ".pth"):  # meant as a file: do not look it up in the registry
        raise InputError(f"--model {model}: no such file")
    from tasks.core.tracking import resolve_model  # imports mlflow: only for a registered model

    with tempfile.TemporaryDirectory() as folder:
        try:
            path = resolve_model(model, Path(folder), project_root())
        except InputError as error:
            raise InputError(f"--model: {error}; train it with `papers run unidrag`, or pass --model FILE") from None
        return shape, load_surrogate(path)


def _settings(trained, **options):
    from tasks.cfd.shape_opt import OptimSettings

    try:
        return OptimSettings(surface_points=trained.config.surface_points, volume_points=trained.config.volume_points,
                             **options)
    except ValueError as error:
        raise InputError(f"optimiser settings: {error}") from None


def _check_seed(seed: int) -> None:
    if seed < 0:
        raise InputError(f"--seed: must be >= 0, got {seed}")


def _frame(shape, mesh_file: Path) -> dict:
    return {"mesh_file": str(mesh_file), "length_scale": 1 / shape.scale, "road": shape.road_rule,
            "a_ref": shape.a_ref}


@app.command("predict")
def predict_command(
    mesh_file: Path = typer.Argument(..., help=MESH_HELP),
    model: str = typer.Option(None, "--model", help=MODEL_HELP),
    seed: int = typer.Option(0, help="Seed of the volume query points (>= 0)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Predicted Cd (A_ref = frontal height of the mid-plane silhouette) and drag build-up profile."""
    import numpy as np

    from tasks.cfd.shape_opt import apply, contour_normals, identity, prepare
    from tasks.cfd.surrogate.samples import Sample
    from tasks.cfd.surrogate.training import predict

    _check_seed(seed)
    single_torch_thread()
    shape, trained = _load(mesh_file, model)
    settings = _settings(trained, seed=seed)
    base = prepare(shape.contour, settings)
    surface, normals, volume, _ = apply(identity(base, settings), base.pool, contour_normals(base.pool),
                                        base.volume_pool, base.centre)
    unknown = lambda *shape_: np.full(shape_, np.nan)  # labels the surrogate does not read
    query = Sample(-1, "user", np.zeros(0), base.pool.numpy(), surface.numpy(), normals.numpy(),
                   unknown(len(surface)), volume.numpy(), unknown(len(volume), 3), float("nan"),
                   unknown(trained.config.profile_bins), base.a_ref0)
    prediction = predict(trained, [query])[0]
    summary = _frame(shape, mesh_file) | {"cd": prediction["cd"], "profile": prediction["profile"].tolist()}
    if as_json:
        print(json.dumps(summary))
        return
    console().print(f"{mesh_file}: predicted Cd {prediction['cd']:.4f} (A_ref = frontal height {shape.a_ref:.4f} L; "
                    f"road: {shape.road_rule})")


def _verify(base, result) -> dict:
    """LBM of the base and the optimised silhouette with the active profile's data-set settings."""
    from flows.unidrag.params import Params
    from tasks.cfd.engines import run_lbm
    from tasks.cfd.verification import contour_body, verified_outcome
    from tasks.core.params import active_profile, load_paper_params

    root = project_root()
    solver = load_paper_params(root, "unidrag", active_profile(root), Params).solver
    placement = solver.placement()
    bodies = [contour_body(contour, base.a_ref0, placement) for contour in (base.pool.numpy(), result.deformed)]
    lbm = run_lbm(solver.setup("cpu"), bodies)
    return verified_outcome(float(lbm.cd[0]), float(lbm.cd[1]), result.a_ref_ratio, result.constraints_hold)


@app.command("optimize")
def optimize_command(
    mesh_file: Path = typer.Argument(..., help=MESH_HELP),
    max_displacement: float = typer.Option(0.05, "--max-displacement",
                                           help="delta_max: bound on every FFD control displacement, in units of L."),
    steps: int = typer.Option(30, help="Optimiser steps (T_opt)."),
    transformations: int = typer.Option(4, help="EoT transformations per step (K)."),
    method: str = typer.Option("eot", help="eot, no_eot or random."),
    out: Path = typer.Option(None, "--out", help="Deformed mesh file, .stl, .obj, .ply or .off "
                                                 "(default: MESH_optimized.stl next to MESH)."),
    verify: bool = typer.Option(False, "--verify", help="Verify base and optimised drag with the LBM (data-set settings)."),
    model: str = typer.Option(None, "--model", help=MODEL_HELP),
    seed: int = typer.Option(0, help="Seed of the point sets and EoT transformations (>= 0)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Minimise predicted drag force under the constraints (|dP| <= max displacement, no streamwise
    motion, frozen underbody layer, area within 2%) and write the deformed mesh in the input's units."""
    import torch

    from tasks.cfd.shape_opt import METHODS, optimise, prepare
    from tasks.cfd.surrogate.training import predict_cd
    from tasks.cfd.user_mesh import deform_mesh

    _check_choice(method, METHODS, "--method")
    if not (math.isfinite(max_displacement) and 0 < max_displacement <= 0.5):
        raise InputError(f"--max-displacement: must be in (0, 0.5] (units of L), got {max_displacement}")
    if not 1 <= steps <= MAX_OPT_STEPS:
        raise InputError(f"--steps: must be in 1..{MAX_OPT_STEPS:,}, got {steps}")
    if not 1 <= transformations <= MAX_TRANSFORMATIONS:
        raise InputError(f"--transformations: must be in 1..{MAX_TRANSFORMATIONS}, got {transformations}")
    _check_seed(seed)
    check_readable(mesh_file, "mesh")  # before --out, whose default folder is the mesh's
    out = out or mesh_file.with_name(f"{mesh_file.stem}_optimized.stl")
    if out.suffix.lower() not in MESH_SUFFIXES:
        raise InputError(f"--out {out}: unknown mesh format {out.suffix!r} (use one of {', '.join(MESH_SUFFIXES)})")
    check_output(out, "--out", inputs={"mesh": mesh_file})
    single_torch_thread()
    shape, trained = _load(mesh_file, model)
    settings = _settings(trained, method=method, steps=steps, transformations=transformations,
                         delta_max=max_displacement, seed=seed)
    base = prepare(shape.contour, settings)
    result = optimise(lambda *inputs: predict_cd(trained, *inputs), base, settings)
    deformed = deform_mesh(shape.mesh, base.lattice, torch.as_tensor(result.dP))
    original = deformed.copy()
    original.vertices = shape.to_original(deformed.vertices)
    with staged_output(out, "--out") as temporary:
        original.export(temporary)  # the format from the suffix, which the temporary name keeps
    summary = _frame(shape, mesh_file) | {
        "out": str(out), "method": method, "predicted_cd_base": result.predicted_force_base,
        "predicted_drag_force": result.predicted_force,
        "predicted_cd_own_aref": result.predicted_force / result.a_ref_ratio,
        "predicted_reduction": result.predicted_reduction,
        "constraints": {"hold": result.constraints_hold, "max_displacement": max_displacement,
                        "max_control_displacement": float(torch.as_tensor(result.dP).norm(dim=1).max()),
                        "mean_surface_displacement": result.mean_displacement,
                        "max_surface_displacement": result.max_displacement, "area_ratio": result.area_ratio,
                        "volume_ratio_3d": float(deformed.volume / shape.mesh.volume),
                        "a_ref_ratio": result.a_ref_ratio},
        "surrogate_calls": result.surrogate_calls, "wall_time_s": result.wall_time_s}
    if verify:
        summary["verified"] = _verify(base, result)
    if as_json:
        print(json.dumps(summary))
        return
    console().print(f"{method}: predicted drag force {result.predicted_force_base:.4f} -> {result.predicted_force:.4f} "
                    f"({100 * result.predicted_reduction:+.1f}% reduction), mean displacement "
                    f"{100 * result.mean_displacement:.2f}% L, constraints {'hold' if result.constraints_hold else 'VIOLATED'}"
                    f" -> {out}")
    if verify:
        v = summary["verified"]
        console().print(f"LBM: Cd {v['cd_base']:.4f} -> {v['cd_opt']:.4f} (base A_ref: drag force), verified reduction "
                        f"{100 * v['verified_reduction']:+.1f}%, success {v['success']}; Cd at its own A_ref "
                        f"{v['cd_opt_own_aref']:.4f} ({100 * v['verified_reduction_own_aref']:+.1f}%)")
