"""UniDrag: multi-field vehicle aerodynamics surrogate + robust differentiable shape optimisation (ICML 2026).

Part 1 stages: generate (parametric 2D vehicles of four body types, LBM labels on worker
processes), validate (Schafer-Turek 2D-1 with the same solver), evaluate (dataset plots and the
solver-validation checks V1-V3). Part 2 adds the surrogate, the optimisation and C1-C3.
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Literal

import numpy as np
from prefect import flow, task, unmapped
from prefect.cache_policies import NO_CACHE
from pydantic import Field, model_validator

from tasks.cfd import dataset_plots
from tasks.cfd.dataset_checks import dataset_metrics, validation_claims
from tasks.cfd.lbm import LBMSetup, run_lbm
from tasks.cfd.validation import schafer_turek_cylinder
from tasks.cfd.vehicle_dataset import Placement, count_nonfinite, labels, splits, tunnel_body
from tasks.cfd.vehicles import BODY_TYPES, PARAMETER_NAMES, export_stl, sample_family
from tasks.core.claims import claims_document
from tasks.core.device import single_torch_thread
from tasks.core.io import write_json
from tasks.core.params import Params as BaseParams
from tasks.core.seeding import derive_seed
from tasks.core.stage import StageContext, StageReport

from .runtime import task_runner

PAPER = "unidrag"
DATA = Path("data") / PAPER
MIN_TAU = 0.53  # BGK stability on the CPU grids (spec §3.1)


class Split(BaseParams):
    train: int = Field(ge=1)
    val: int = Field(ge=0)
    test: int = Field(ge=1)


class Geometry(BaseParams):
    per_type: int = Field(ge=1)
    split: Split
    contour_points: int = Field(ge=16)
    stl_examples: int = Field(ge=0)

    @model_validator(mode="after")
    def split_covers_every_shape(self):
        total = self.split.train + self.split.val + self.split.test
        if total != self.per_type:
            raise ValueError(f"split: train + val + test must equal per_type = {self.per_type}, got {total}")
        return self


class Solver(BaseParams):
    length_cells: int = Field(ge=4)
    grid: tuple[int, int]
    front_lengths: float = Field(gt=0)
    u_lat: float = Field(gt=0, lt=0.3)
    reynolds: float = Field(gt=0)
    steps: int = Field(ge=2)
    average_steps: int = Field(ge=1)
    bounce_back: Literal["halfway", "bouzidi"]
    batch_size: int = Field(ge=1)
    profile_bins: int = Field(ge=1)

    @property
    def tau(self) -> float:
        return 3 * self.u_lat * self.length_cells / self.reynolds + 0.5

    @model_validator(mode="after")
    def stable_and_inside_the_grid(self):
        if self.tau < MIN_TAU:
            raise ValueError(f"reynolds: tau = 3 u_lat L / Re + 0.5 = {self.tau:.4f} < {MIN_TAU} (unstable BGK)")
        if 2 * self.average_steps > self.steps:
            raise ValueError(f"average_steps: two windows (convergence drift) must fit in steps = {self.steps}, "
                             f"got {self.average_steps}")
        nx, nz = self.grid
        if (self.front_lengths + 2.5) * self.length_cells > nx or self.length_cells + 1 > nz:
            raise ValueError(f"grid: {self.grid} cannot hold the body (L = {self.length_cells}) and the volume "
                             f"box x in [-0.5 L, 2.5 L] behind a nose at {self.front_lengths} L")
        return self

    def setup(self, device: str) -> LBMSetup:
        return LBMSetup(lattice="D2Q9", grid=self.grid, tau=self.tau, u_lat=self.u_lat, steps=self.steps,
                        average_steps=self.average_steps, ramp_steps=round(self.length_cells / self.u_lat),
                        bounce_back=self.bounce_back, ground="moving", top="free_stream",
                        profile_bins=self.profile_bins, device=device)

    def placement(self) -> Placement:
        return Placement(self.length_cells, self.front_lengths * self.length_cells)


class Sampling(BaseParams):
    surface_points: int = Field(ge=8)
    volume_points: int = Field(ge=8)


class Validation(BaseParams):
    diameter_cells: int = Field(ge=4)
    steps: int = Field(ge=100)


class Checks(BaseParams):
    cd_tolerance: float = Field(gt=0)
    recirculation_tolerance: float = Field(gt=0)
    max_drift: float = Field(gt=0)
    decide_claims: bool


class Params(BaseParams):
    seed: int = Field(ge=0)
    geometry: Geometry
    solver: Solver
    sampling: Sampling
    validation: Validation
    checks: Checks
    device: str = "auto"


# ---------------------------------------------------------------- generate

@task(cache_policy=NO_CACHE)
def label_batch(batch: int, indices: list[int], params: Params, device: str, labels_folder: Path) -> list[dict]:
    """LBM run of one batch of shapes on this worker (one torch thread); writes one npz per shape."""
    single_torch_thread()
    family = sample_family(params.geometry.per_type, params.seed)
    vehicles = [family[i] for i in indices]
    placement = params.solver.placement()
    result = run_lbm(params.solver.setup(device), [tunnel_body(v, placement) for v in vehicles])
    rows = []
    for b, (index, vehicle) in enumerate(zip(indices, vehicles)):
        record = labels(result, b, vehicle, placement, params.sampling.surface_points, params.sampling.volume_points,
                        derive_seed(params.seed, "volume", index))
        np.savez(labels_folder / f"{index:05d}.npz", **record)
        rows.append({"index": index, "body_type": vehicle.body_type, "cd": float(record["cd"]),
                     "drift": float(record["drift"]), "nonfinite": count_nonfinite(record),
                     "diverged": bool(record["diverged"])})
    return [row | {"batch": batch, "batch_mlups": result.mlups, "batch_wall_s": result.wall_time_s} for row in rows]


@flow(name="unidrag-generate", task_runner=task_runner("process"))
def generate(params: Params, context: StageContext) -> StageReport:
    started = time.perf_counter()
    family = sample_family(params.geometry.per_type, params.seed)
    shapes, labels_folder = context.out(str(DATA / "shapes")), context.out(str(DATA / "labels"))
    shapes.mkdir(parents=True)
    labels_folder.mkdir(parents=True)
    for index, vehicle in enumerate(family):
        contour, normals = vehicle.contour(params.geometry.contour_points)
        np.savez(shapes / f"{index:05d}.npz", body_type=vehicle.body_type, params=vehicle.vector(),
                 parameter_names=np.array(PARAMETER_NAMES), contour=contour, contour_normals=normals,
                 h_ref=vehicle.h_ref)
    for body_type in BODY_TYPES[:params.geometry.stl_examples]:  # 3D counterparts of the first shape of each type
        export_stl(family[BODY_TYPES.index(body_type)].mesh(), shapes / "stl" / f"{body_type}.stl")
    size = params.solver.batch_size
    batches = [list(range(i, min(i + size, len(family)))) for i in range(0, len(family), size)]
    futures = label_batch.map(range(len(batches)), batches, unmapped(params), unmapped(context.device),
                              unmapped(labels_folder))
    rows = [row for batch in futures.result() for row in batch]
    split = splits([v.body_type for v in family], params.geometry.split.model_dump(), params.seed)
    write_json(context.out(str(DATA / "splits.json")), split)
    metrics = dataset_metrics(rows, time.perf_counter() - started) | {"tau": params.solver.tau}
    write_json(context.out(str(DATA / "dataset_metrics.json")), metrics | {"per_shape": rows})
    if metrics["nan_count"] or metrics["diverged"]:
        raise RuntimeError(f"unidrag-generate: {metrics['nan_count']} non-finite label values and "
                           f"{metrics['diverged']} diverged runs; no data set is written")
    return StageReport(metrics=metrics)


# ---------------------------------------------------------------- validate

@flow(name="unidrag-validate", task_runner=task_runner())
def validate(params: Params, context: StageContext) -> StageReport:
    single_torch_thread()
    v = params.validation
    result = schafer_turek_cylinder(re=20, diameter_cells=v.diameter_cells, steps=v.steps,
                                    bounce_back=params.solver.bounce_back, device=context.device)
    write_json(context.out(str(DATA / "lbm_validation.json")), result)
    return StageReport(metrics={k: result[k] for k in ("cd_mean", "dp", "mlups", "wall_time_s")}
                       | {f"relative_error.{k}": e for k, e in result["relative_error"].items()})


# ---------------------------------------------------------------- evaluate

def load_labels(folder: Path) -> list[dict]:
    records = []
    for path in sorted(folder.glob("*.npz")):
        with np.load(path) as data:
            records.append({key: data[key] for key in data.files})
    return records


@flow(name="unidrag-evaluate", task_runner=task_runner())
def evaluate(params: Params, context: StageContext) -> StageReport:
    dataset = json.loads(context.data(str(DATA / "dataset_metrics.json")).read_text())
    validation = json.loads(context.data(str(DATA / "lbm_validation.json")).read_text())
    records = load_labels(context.data(str(DATA / "labels")))
    types = [row["body_type"] for row in sorted(dataset["per_shape"], key=lambda r: r["index"])]
    c = params.checks
    claims = validation_claims(validation, dataset, c.cd_tolerance, c.recirculation_tolerance, c.max_drift,
                               c.decide_claims)
    write_json(context.out(str(DATA / "claims.json")), claims_document(PAPER, context.profile, context.commit, claims))
    folder = context.out(str(DATA / "plots"))
    dataset_plots.cd_per_body_type(types, [float(r["cd"]) for r in records], folder / "cd_per_body_type.png")
    first = [types.index(t) for t in BODY_TYPES]
    dataset_plots.silhouettes_with_cp([records[i] for i in first], list(BODY_TYPES), folder / "surface_cp.png")
    dataset_plots.drag_profiles(records, types, folder / "drag_profiles.png")
    dataset_plots.convergence_traces(records, types, params.solver.average_steps, folder / "convergence.png")
    metrics = {k: v for k, v in dataset.items() if k != "per_shape"} | {
        "validation.cd": validation["cd_mean"], "validation.recirculation_length": validation["recirculation_length"]}
    write_json(context.out(str(DATA / "metrics.json")), metrics)
    return StageReport(metrics=metrics, tags={f"claim.{claim.id}": str(claim.passed) for claim in claims})


STAGES = {"generate": generate, "validate": validate, "evaluate": evaluate}
