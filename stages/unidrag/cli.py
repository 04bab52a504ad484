"""`papers cfd`: validate the lattice-Boltzmann solver against published reference values."""
from __future__ import annotations

import json

import typer
from rich.table import Table

from tasks.cfd.lbm import BOUNCE_BACKS, COLLISIONS, DTYPES
from tasks.cfd.validation import schafer_turek_cylinder, sphere_drag
from tasks.core.device import resolve_device, single_torch_thread

from ..console import console

app = typer.Typer(help="Lattice-Boltzmann solver validation cases.", no_args_is_help=True)
err = console(stderr=True)
CYLINDER_KEYS = ("cd_mean", "cd_max", "cl_max", "dp", "recirculation_length", "strouhal")


def _check_choice(value: str, allowed: tuple[str, ...], hint: str) -> None:
    if value not in allowed:
        raise typer.BadParameter(f"must be one of {', '.join(allowed)}, got {value!r}", param_hint=hint)


def _print_table(title: str, ours: dict, reference: dict, errors: dict) -> None:
    table = Table(title=title)
    for column in ("quantity", "ours", "reference", "error"):
        table.add_column(column, justify="right" if column != "quantity" else "left")
    fmt = lambda v: "-" if v is None else f"{v:.4f}"
    for key, value in ours.items():
        error = errors.get(key)
        table.add_row(key, fmt(value), fmt(reference.get(key)), "-" if error is None else f"{100 * error:+.1f}%")
    console().print(table)


@app.command()
def cylinder(
    re: float = typer.Option(20.0, "--re", help="Reynolds number U_mean D / nu (20: case 2D-1, 100: case 2D-2)."),
    diameter_cells: int = typer.Option(10, "--diameter-cells", help="Cylinder diameter in lattice cells (>= 4)."),
    steps: int = typer.Option(None, "--steps", help="Time steps (default 1000 D steady, 4000 D shedding)."),
    bouzidi: bool = typer.Option(False, "--bouzidi", help="Interpolated (Bouzidi) bounce-back instead of half-way."),
    collision: str = typer.Option("bgk", help=f"One of {', '.join(COLLISIONS)}."),
    u_max: float = typer.Option(0.1, "--u-max", help="Peak inflow speed in lattice units."),
    dtype: str = typer.Option("float32", help=f"One of {', '.join(DTYPES)}."),
    device: str = typer.Option("auto", help="auto, cpu or cuda."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Schafer-Turek cylinder in a channel: Cd, Cl, pressure difference, recirculation length (or
    Strouhal number) next to the reference values."""
    _check_choice(collision, COLLISIONS, "--collision")
    _check_choice(dtype, DTYPES, "--dtype")
    if diameter_cells < 4:
        raise typer.BadParameter(f"must be >= 4, got {diameter_cells}", param_hint="--diameter-cells")
    if re <= 0:
        raise typer.BadParameter(f"must be > 0, got {re}", param_hint="--re")
    if steps is not None and steps < 10:
        raise typer.BadParameter(f"must be >= 10, got {steps}", param_hint="--steps")
    single_torch_thread()
    try:
        result = schafer_turek_cylinder(re, diameter_cells, steps, BOUNCE_BACKS[1] if bouzidi else BOUNCE_BACKS[0],
                                        collision, u_max, dtype, resolve_device(device))
    except ValueError as error:
        err.print(f"[red]error:[/] {error}")
        raise typer.Exit(2) from None
    if as_json:
        print(json.dumps({key: result[key] for key in CYLINDER_KEYS} | {"details": result}))
        return
    _print_table(f"Schafer-Turek cylinder, Re {re:g}, D = {diameter_cells} cells, {result['steps']} steps, "
                 f"{result['bounce_back']} ({result['mlups']:.1f} MLUPS)",
                 {key: result[key] for key in ("cl_mean", *CYLINDER_KEYS)}, result["reference"] or {},
                 result["relative_error"])


@app.command()
def sphere(
    re: float = typer.Option(20.0, "--re", help="Reynolds number U D / nu (Schiller-Naumann holds for Re < 800)."),
    diameter_cells: int = typer.Option(8, "--diameter-cells", help="Sphere diameter in lattice cells (>= 4)."),
    steps: int = typer.Option(None, "--steps", help="Time steps (default: three flow-throughs of the box)."),
    halfway: bool = typer.Option(False, "--halfway", help="Half-way bounce-back instead of Bouzidi."),
    device: str = typer.Option("auto", help="auto, cpu or cuda."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """D3Q19 sphere drag at low Re against the Schiller-Naumann correlation."""
    if diameter_cells < 4 or re <= 0:
        raise typer.BadParameter(f"need re > 0 and diameter >= 4, got {re}, {diameter_cells}")
    single_torch_thread()
    result = sphere_drag(re, diameter_cells, steps, bounce_back="halfway" if halfway else "bouzidi",
                         device=resolve_device(device))
    if as_json:
        print(json.dumps(result))
        return
    _print_table(f"Sphere, Re {re:g}, D = {diameter_cells} cells, {result['steps']} steps ({result['mlups']:.1f} MLUPS)",
                 {"cd": result["cd"]}, {"cd": result["reference_cd"]}, {"cd": result["relative_error"]})
