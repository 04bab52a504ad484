"""UniDrag: multi-field vehicle aerodynamics surrogate + robust differentiable shape optimisation (ICML 2026).

Stages: generate (parametric 2D vehicles of four body types, LBM labels on worker processes),
validate (Schafer-Turek 2D-1 with the same solver), train (UniDrag, baselines and ablations, every
kind and seed a mapped task on a worker process), solve (FFD shape optimisation through the frozen
UniDrag surrogate: EoT, no-EoT, random search), calibrate (LBM verification of every optimised
shape with the data set's exact settings), evaluate (dataset plots, V1-V3, C1-C3).
"""
from __future__ import annotations

import json
import pickle
import time
from functools import lru_cache, partial
from pathlib import Path

import numpy as np
import torch
from prefect import flow, unmapped
from sklearn.metrics import r2_score

from flows.runtime import task_runner
from flows.stage_task import stage_task
from tasks.cfd.engines import run_lbm
from tasks.cfd.ffd import ControlLattice
from tasks.cfd.shape_opt import OptimSettings, optimise, prepare
from tasks.cfd.surrogate.gbt import fit_gbt
from tasks.cfd.surrogate.samples import Standardizer, select
from tasks.cfd.surrogate.training import TrainConfig, predict, predict_cd, train_surrogate
from tasks.cfd.surrogate.training import metrics as surrogate_metrics
from tasks.cfd.surrogate.uncertainty import r2_intervals
from tasks.cfd.validation import schafer_turek_cylinder
from tasks.cfd.vehicle_dataset import count_nonfinite, labels, splits, tunnel_body
from tasks.cfd.vehicles import BODY_TYPES, PARAMETER_NAMES, export_stl, sample_family
from tasks.cfd.verification import deformed_vehicle_body, verified_outcome
from tasks.core.device import single_torch_thread
from tasks.core.io import write_json
from tasks.core.seeding import derive_seed
from tasks.core.stage import StageContext, StageReport

from . import dataset_plots, opt_plots
from .claims import optimisation_claims, prediction_claim
from .dataset import DatasetFiles, load_samples
from .dataset_checks import dataset_metrics, validation_claims
from .params import Optimisation, Params, Sampling, Surrogate
from .surrogates import MPL_KINDS, build_model, load_surrogate

PAPER = "unidrag"


# ---------------------------------------------------------------- generate

@stage_task
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


# Task-library configs from params live here, not in params.py: a stage depends on the configs it builds only.
def train_config(surrogate: Surrogate, kind: str, seed: int, sampling: Sampling, bins: int) -> TrainConfig:
    return TrainConfig(kind=kind, mpl=kind in MPL_KINDS, d=surrogate.d, blocks=surrogate.blocks, heads=surrogate.heads,
                       slices=surrogate.slices, experts=surrogate.experts, top_k=surrogate.top_k, steps=surrogate.steps,
                       batch=surrogate.batch, surface_points=sampling.surface_points,
                       volume_points=sampling.volume_points, profile_bins=bins, pcgrad_scope=surrogate.pcgrad_scope,
                       pcgrad_every=surrogate.pcgrad_every, eval_every=surrogate.eval_every,
                       patience=surrogate.patience, smooth_window=surrogate.smooth_window, seed=seed)


def optim_settings(optimisation: Optimisation, method: str, sampling: Sampling, seed: int) -> OptimSettings:
    return OptimSettings(method=method, steps=optimisation.steps, transformations=optimisation.transformations,
                         delta_max=optimisation.delta_max, surface_points=sampling.surface_points,
                         volume_points=sampling.volume_points, penalty=optimisation.penalty,
                         volume_tolerance=optimisation.volume_tolerance, seed=seed)


@flow(name="unidrag-generate", task_runner=task_runner("process"))
def generate(params: Params, context: StageContext) -> StageReport:
    started = time.perf_counter()
    family = sample_family(params.geometry.per_type, params.seed)
    shapes, labels_folder = context.out("shapes"), context.out("labels")
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
    write_json(context.out("splits.json"), split)
    metrics = dataset_metrics(rows, time.perf_counter() - started) | {"tau": params.solver.tau}
    write_json(context.out("dataset_metrics.json"), metrics | {"per_shape": rows})
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
                                    bounce_back=params.solver.bounce_back, device=context.device,
                                    engine=params.solver.engine)
    write_json(context.out("lbm_validation.json"), result)
    return StageReport(metrics={k: result[k] for k in ("cd_mean", "dp", "mlups", "wall_time_s")}
                       | {f"relative_error.{k}": e for k, e in result["relative_error"].items()})


# ---------------------------------------------------------------- train


def model_file(folder: Path, kind: str, seed_number: int) -> Path:
    return folder / f"{kind}-seed{seed_number}.pt"


@stage_task
def train_model(kind: str, seed_number: int, seed: int, params: Params, dataset: DatasetFiles, models: Path) -> dict:
    """One surrogate on this worker (one torch thread); saves it and returns its training summary."""
    single_torch_thread()
    samples, split = load_samples(dataset)
    train, val = select(samples, split["train"]), select(samples, split["val"])
    config = train_config(params.surrogate, kind, seed, params.sampling, params.solver.profile_bins)
    trained = train_surrogate(config, build_model, train, val, Standardizer.fit(train))
    trained.save(model_file(models, kind, seed_number))
    h = trained.history
    conflicts = [c for c in h["conflict_rate"] if np.isfinite(c)]
    return {"kind": kind, "seed_number": seed_number, "seed": seed, "seconds": h["seconds"],
            "seconds_per_step": h["seconds_per_step"], "shapes_per_second": config.batch / h["seconds_per_step"],
            "final_loss": float(np.mean(h["loss"][-10:])), "val": h.get("val"), "steps_run": h["steps_run"],
            "best_step": h.get("best_step"), "val_curve": h.get("val_curve"), "smoothed_curve": h.get("smoothed_curve"),
            "pcgrad_conflict_rate": float(np.mean(conflicts)) if conflicts else None,
            "gate_usage": h["gate_usage"][-1] if h["gate_usage"] else None,
            "curves": {m: h[m] for m in ("loss", "surface_cp", "volume", "cd", "profile")}}


@flow(name="unidrag-train", task_runner=task_runner("process"))
def train(params: Params, context: StageContext) -> StageReport:
    dataset = DatasetFiles(context.data("shapes"), context.data("labels"), context.data("splits.json"))
    models = context.out("models")
    models.mkdir(parents=True)
    runs = params.surrogate.runs(params.seed)
    futures = train_model.map([r[0] for r in runs], [r[1] for r in runs], [r[2] for r in runs], unmapped(params),
                              unmapped(dataset), unmapped(models))
    rows = futures.result()
    if params.surrogate.gbt:
        samples, split = load_samples(dataset)
        started = time.perf_counter()
        gbt = fit_gbt(select(samples, split["train"]), derive_seed(params.seed, "gbt"))
        (models / "gbt.pkl").write_bytes(pickle.dumps(gbt))
        rows.append({"kind": "gbt", "seed_number": 0, "seconds": time.perf_counter() - started})
    write_json(context.out("train_report.json"), [{k: v for k, v in r.items() if k != "curves"} for r in rows])
    first = next(r for r in rows if r["kind"] == "unidrag" and r["seed_number"] == 0)
    metrics = {f"{r['kind']}.seed{r['seed_number']}.{k}": r[k] for r in rows
               for k in ("seconds", "seconds_per_step", "shapes_per_second", "final_loss", "steps_run", "best_step")
               if r.get(k) is not None}
    return StageReport(metrics=metrics, curves={f"unidrag.{m}": v for m, v in first["curves"].items()},
                       models={f"{PAPER}-surrogate": str(model_file(Path("models"), "unidrag", 0))})


# ---------------------------------------------------------------- solve (optimise)


def optimisation_shapes(split: dict[str, list[int]], types: list[str], count: int) -> list[int]:
    """`count` test shapes, round-robin over body types (the k-th test shape of each type in turn)."""
    per_type = [[i for i in split["test"] if types[i] == t] for t in BODY_TYPES]
    order = [members[k] for k in range(max(map(len, per_type))) for members in per_type if k < len(members)]
    if count > len(order):
        raise ValueError(f"optimisation.shapes: the test split holds {len(order)} shapes, got {count}")
    return order[:count]


@lru_cache(maxsize=1)
def frozen_surrogate(path: str):
    """The Cd model of a saved surrogate, loaded once per worker process."""
    return partial(predict_cd, load_surrogate(Path(path)))


@stage_task
def optimise_shape(index: int, method: str, params: Params, shapes: Path, model: Path, out: Path) -> dict:
    single_torch_thread()
    torch.manual_seed(0)
    with np.load(shapes / f"{index:05d}.npz") as shape_file:
        contour = shape_file["contour"]
    settings = optim_settings(params.optimisation, method, params.sampling, derive_seed(params.seed, "optimise", index))
    shape = prepare(contour, settings)
    result = optimise(frozen_surrogate(str(model)), shape, settings)
    lattice = shape.lattice
    np.savez(out / f"{index:05d}_{method}.npz", dP=result.dP, deformed=result.deformed, base=shape.pool.numpy(),
             history=np.array(result.history), lattice_lower=lattice.lower, lattice_upper=lattice.upper,
             lattice_counts=lattice.counts)
    return {"index": index, "method": method} | {k: v for k, v in vars(result).items()
                                                  if k not in ("dP", "deformed", "history", "method")}


@flow(name="unidrag-solve", task_runner=task_runner("process"))
def solve(params: Params, context: StageContext) -> StageReport:
    split = json.loads(context.data("splits.json").read_text())
    types = [v.body_type for v in sample_family(params.geometry.per_type, params.seed)]
    indices = optimisation_shapes(split, types, params.optimisation.shapes)
    out = context.out("opt")
    out.mkdir(parents=True)
    jobs = [(i, m) for i in indices for m in params.optimisation.methods]
    futures = optimise_shape.map([j[0] for j in jobs], [j[1] for j in jobs], unmapped(params),
                                 unmapped(context.data("shapes")),
                                 unmapped(model_file(context.data("models"), "unidrag", 0)), unmapped(out))
    rows = [row | {"body_type": types[row["index"]]} for row in futures.result()]
    write_json(out / "summary.json", rows)
    metrics = {}
    for method in params.optimisation.methods:
        mine = [r for r in rows if r["method"] == method]
        metrics |= {f"{method}.mean_predicted_reduction": float(np.mean([r["predicted_reduction"] for r in mine])),
                    f"{method}.mean_displacement": float(np.mean([r["mean_displacement"] for r in mine])),
                    f"{method}.wall_time_s": float(np.sum([r["wall_time_s"] for r in mine])),
                    f"{method}.surrogate_calls": float(np.sum([r["surrogate_calls"] for r in mine]))}
    return StageReport(metrics=metrics)


# ---------------------------------------------------------------- calibrate (verify)

@stage_task
def verify_batch(rows: list[dict], params: Params, device: str, opt: Path) -> list[dict]:
    """LBM of a batch of optimised shapes with the data set's exact setup and placement."""
    single_torch_thread()
    family = sample_family(params.geometry.per_type, params.seed)
    placement, bodies = params.solver.placement(), []
    for row in rows:
        with np.load(opt / f"{row['index']:05d}_{row['method']}.npz") as saved:
            lattice = ControlLattice(tuple(saved["lattice_lower"].tolist()), tuple(saved["lattice_upper"].tolist()),
                                     tuple(int(c) for c in saved["lattice_counts"]))
            bodies.append(deformed_vehicle_body(family[row["index"]], lattice, saved["dP"], placement))
    result = run_lbm(params.solver.setup(device), bodies)
    return [{"index": row["index"], "method": row["method"], "cd_lbm": float(result.cd[b]),
             "profile_lbm": result.drag_profile[b].tolist(), "diverged": bool(result.diverged[b]),
             "batch_mlups": result.mlups, "batch_wall_s": result.wall_time_s} for b, row in enumerate(rows)]


@flow(name="unidrag-calibrate", task_runner=task_runner("process"))
def calibrate(params: Params, context: StageContext) -> StageReport:
    opt = context.data("opt")
    rows = json.loads((opt / "summary.json").read_text())
    size = params.solver.batch_size
    batches = [rows[i:i + size] for i in range(0, len(rows), size)]
    futures = verify_batch.map(batches, unmapped(params), unmapped(context.device), unmapped(opt))
    results = futures.result()
    lbm = {(r["index"], r["method"]): r for batch in results for r in batch}
    labels_folder = context.data("labels")
    verified = []
    for row in rows:
        run = lbm[row["index"], row["method"]]
        if run["diverged"] or not np.isfinite(run["cd_lbm"]):
            raise RuntimeError(f"unidrag-calibrate: the LBM of shape {row['index']} ({row['method']}) diverged")
        with np.load(labels_folder / f"{row['index']:05d}.npz") as label:  # same settings: the data set's Cd
            cd_base, profile_base = float(label["cd"]), label["profile"].tolist()
        outcome = verified_outcome(cd_base, run["cd_lbm"], row["a_ref_ratio"], row["constraints_hold"])
        verified.append(row | outcome | {"profile_base": profile_base, "profile_opt": run["profile_lbm"]})
    write_json(context.out("verified.json"), verified)
    metrics = {"lbm_runs": len(rows), "lbm_core_seconds": float(sum(batch[0]["batch_wall_s"] for batch in results))}
    for method in params.optimisation.methods:
        mine = [v for v in verified if v["method"] == method]
        metrics |= {f"{method}.mean_verified_reduction": float(np.mean([v["verified_reduction"] for v in mine])),
                    f"{method}.mean_verified_reduction_own_aref":
                        float(np.mean([v["verified_reduction_own_aref"] for v in mine])),
                    f"{method}.success_rate": float(np.mean([v["success"] for v in mine]))}
    return StageReport(metrics=metrics)


# ---------------------------------------------------------------- evaluate

def load_labels(folder: Path) -> list[dict]:
    records = []
    for path in sorted(folder.glob("*.npz")):
        with np.load(path) as data:
            records.append({key: data[key] for key in data.files})
    return records


def surrogate_predictions(params: Params, models: Path, test: list) -> tuple[dict, dict, dict]:
    """(kind -> test metrics per seed, kind -> predictions of its first seed, kind -> test Cd
    predictions [seeds, n]) for every trained model."""
    scores, first, cd = {}, {}, {}
    for kind, seed_number, _ in params.surrogate.runs(params.seed):
        predictions = predict(load_surrogate(model_file(models, kind, seed_number)), test)
        scores.setdefault(kind, []).append(surrogate_metrics(predictions, test))
        first.setdefault(kind, predictions)
        cd.setdefault(kind, []).append([p["cd"] for p in predictions])
    if params.surrogate.gbt:
        gbt = pickle.loads((models / "gbt.pkl").read_bytes()).predict_cd(test)
        scores["gbt"] = [{"r2_cd": float(r2_score([s.cd for s in test], gbt))}]
        first["gbt"] = [{"cd": float(c)} for c in gbt]
        cd["gbt"] = [list(gbt)]
    return scores, first, cd


def optimisation_plots(verified: list[dict], opt: Path, types: list[str], folder: Path) -> None:
    eot = [v for v in verified if v["method"] == "eot"]
    names = [f"{v['index']} {types[v['index']]}" for v in eot]
    opt_plots.profiles_before_after([np.array(v["profile_base"]) for v in eot],
                                    [np.array(v["profile_opt"]) for v in eot], names, folder / "drag_profiles_opt.png")
    methods = list(dict.fromkeys(v["method"] for v in verified))

    def load(index: int, method: str, key: str) -> np.ndarray:
        with np.load(opt / f"{index:05d}_{method}.npz") as saved:
            return saved[key]

    opt_plots.deformed_silhouettes([load(v["index"], "eot", "base") for v in eot],
                                   {m: [load(v["index"], m, "deformed") for v in eot] for m in methods}, names,
                                   folder / "deformed_silhouettes.png")


@flow(name="unidrag-evaluate", task_runner=task_runner())
def evaluate(params: Params, context: StageContext) -> StageReport:
    single_torch_thread()
    dataset = json.loads(context.data("dataset_metrics.json").read_text())
    validation = json.loads(context.data("lbm_validation.json").read_text())
    records = load_labels(context.data("labels"))
    types = [row["body_type"] for row in sorted(dataset["per_shape"], key=lambda r: r["index"])]
    c = params.checks
    claims = validation_claims(validation, dataset, c.cd_tolerance, c.recirculation_tolerance, c.max_drift,
                               params.seed, c.decide_claims)
    samples, split = load_samples(DatasetFiles(context.data("shapes"), context.data("labels"), context.data("splits.json")))
    test = select(samples, split["test"])
    scores, predictions, cd = surrogate_predictions(params, context.data("models"), test)
    intervals = r2_intervals(np.array([s.cd for s in test]), cd, [("unidrag", "transolver")],
                             params.surrogate.bootstrap, derive_seed(params.seed, "bootstrap"))
    claims.append(prediction_claim(scores, intervals, c.min_r2, len(test), params.surrogate.bootstrap, c.decide_claims))
    verified = json.loads(context.data("verified.json").read_text())
    by_method = {m: [v for v in verified if v["method"] == m] for m in params.optimisation.methods}
    claims += optimisation_claims(by_method, c.min_reduction, c.min_success, params.seed, c.decide_claims)

    folder = context.out("plots")
    dataset_plots.cd_per_body_type(types, [float(r["cd"]) for r in records], folder / "cd_per_body_type.png")
    first = [types.index(t) for t in BODY_TYPES]
    dataset_plots.silhouettes_with_cp([records[i] for i in first], list(BODY_TYPES), folder / "surface_cp.png")
    dataset_plots.drag_profiles(records, types, folder / "drag_profiles.png")
    dataset_plots.convergence_traces(records, types, params.solver.average_steps, folder / "convergence.png")
    opt_plots.validation_curves(json.loads(context.data("train_report.json").read_text()),
                                folder / "validation_curves.png")
    opt_plots.predicted_vs_lbm_cd(np.array([s.cd for s in test]),
                                  {k: np.array([p["cd"] for p in rows]) for k, rows in predictions.items()},
                                  folder / "predicted_vs_lbm_cd.png")
    opt_plots.surface_cp(test[0].surface_points, test[0].surface_cp, predictions["unidrag"][0]["surface_cp"],
                         folder / "surface_cp_predicted.png")
    optimisation_plots(verified, context.data("opt"), types, folder)

    claim = {cl.id: cl for cl in claims}
    metrics = {k: v for k, v in dataset.items() if k != "per_shape"} | {
        "validation.cd": validation["cd_mean"], "validation.recirculation_length": validation["recirculation_length"]}
    metrics |= {f"{kind}.{name}": value for kind, summary in claim["C1"].details["models"].items()
                for name, value in summary.items() if not isinstance(value, dict)}
    metrics |= {f"{method}.{name}": value for method, summary in claim["C3"].details["methods"].items()
                for name, value in summary.items()}
    c1 = claim["C1"].details
    headline = {"r2_transolver": c1["r2_transolver"], "gain_ci_low": c1["absolute_gain_interval"]["ci_low"],
                "gain_ci_high": c1["absolute_gain_interval"]["ci_high"], "r2_ci_low": intervals["unidrag"]["ci_low"],
                "r2_ci_high": intervals["unidrag"]["ci_high"], "test_shapes": len(test)}
    metrics |= {f"{kind}.r2_cd_{k}": v for kind, row in intervals.items() for k, v in row.items()}
    return StageReport(metrics=metrics, claims=claims, headline=headline)


STAGES = {"generate": generate, "validate": validate, "train": train, "solve": solve, "calibrate": calibrate,
          "evaluate": evaluate}
