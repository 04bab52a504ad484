"""Learned early stopping for MIP solvers with a conformal guarantee (Clarke & Stellato, ICML 2026).

Stages: generate (MPS instances per family and split), solve (full SCIP solves recording the
solver state, and the solution-limit baselines, on worker processes), train (the bounded LSTM
gap predictor per family), calibrate (conformal thresholds of the network, the algorithmic-gap
rule and the time limit), evaluate (replay on the test split, an online re-solve subset, claims).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from prefect import flow

from flows.runtime import task_runner
from flows.stage_task import stage_task
from tasks.core.device import single_torch_thread
from tasks.core.io import write_csv, write_json
from tasks.core.seeding import derive_seed
from tasks.core.stage import StageContext, StageReport
from tasks.mip import generators, solver
from tasks.mip.conformal import first_fire, scip_gap
from tasks.mip.model import load_model, save_model
from tasks.mip.model import train as train_model
from tasks.mip.stopper import NetworkStopper, signature
from tasks.mip.trajectory import PROVED, Trajectory, load_trajectory, save_trajectory

from . import plots
from .calibration import calibrate_family
from .claims import family_claims
from .params import Family, Params
from .replay import compare_online, evaluate_family, online_inference

PAPER = "mip_early_stop"
SPLITS = ("train", "cal", "test")


def instance_dir(root_or_tmp: Path, family: str, split: str) -> Path:
    return root_or_tmp / family / split


# ---------------------------------------------------------------- generate

@stage_task(retries=2, retry_delay_seconds=1)
def make_instance(family: str, size: dict, seed: int, path: Path) -> dict:
    path.parent.mkdir(parents=True, exist_ok=True)
    return {"file": path.name, **generators.generate(family, size, seed, path)}


@flow(name="mip_early_stop-generate", task_runner=task_runner())
def generate(params: Params, context: StageContext) -> StageReport:
    out = context.out("instances")
    futures = []
    for family in params.families:
        for split in SPLITS:
            for k in range(getattr(family, split)):
                seed = derive_seed(params.seed, family.name, split, k)
                path = instance_dir(out, family.name, split) / f"{family.name}_{split}_{k:04d}.mps"
                futures.append((family.name, split, make_instance.submit(family.name, family.size, seed, path)))
    listing = [{"family": f, "split": s, **future.result()} for f, s, future in futures]
    write_json(out / "instances.json", listing)
    return StageReport(metrics={f"{f.name}.instances": f.train + f.cal + f.test for f in params.families}
                       | {f"{f.name}.mean_vars": float(np.mean([i["n_vars"] for i in listing if i["family"] == f.name]))
                          for f in params.families})


# ---------------------------------------------------------------- solve

@stage_task
def record(mps: Path, family: str, out: Path, settings: dict, best_sol_limit: int | None = None) -> dict:
    """One SCIP solve with the sampling event handler (one SCIP thread per worker process)."""
    trajectory, _ = solver.solve(mps, family=family, bound=solver.BOUNDS[family], best_sol_limit=best_sol_limit, **settings)
    out.parent.mkdir(parents=True, exist_ok=True)
    save_trajectory(out, trajectory)
    return {"instance": mps.stem, "time": trajectory.solve_time, "status": trajectory.status, "rows": len(trajectory)}


def solver_settings(params: Params, seed: int) -> dict:
    return {"gap": params.gap, "time_limit": params.time_limit, "node_limit": params.node_limit,
            "sample_dt": params.sample_dt, "seed_shift": seed % 2**30}


def unproved(done: list[dict]) -> dict:
    """Per family and split, the full solves SCIP did not prove (instance: status): never labels."""
    left_out: dict = {}
    for d in done:
        if "split" in d:
            left_out.setdefault(d["family"], {}).setdefault(d["split"], {})
            if d["status"] not in PROVED:
                left_out[d["family"]][d["split"]][d["instance"]] = d["status"]
    return left_out


@flow(name="mip_early_stop-solve", task_runner=task_runner("process"))
def solve(params: Params, context: StageContext) -> StageReport:
    instances = context.data("instances")
    trajectories, baselines = context.out("trajectories"), context.out("baselines")
    jobs = []
    for family in params.families:
        for split in SPLITS:
            for mps in sorted(instance_dir(instances, family.name, split).glob("*.mps")):
                settings = solver_settings(params, derive_seed(params.seed, "scip", mps.stem))
                where = {"family": family.name, "split": split}
                jobs.append((where, record.submit(mps, family.name, instance_dir(trajectories, family.name, split) / f"{mps.stem}.npz",
                                                  settings)))
                if split == "test":  # the paper's solution-limit baselines (spec §4.2-4.3)
                    for limit in (1, 3):
                        jobs.append(({}, record.submit(mps, family.name, baselines / f"bestsol{limit}" / family.name / f"{mps.stem}.npz",
                                                       settings, limit)))
    done = [where | job.result() for where, job in jobs]
    full = [d for d in done if "split" in d]
    left_out = unproved(done)
    write_json(trajectories / "unproved.json", left_out)
    return StageReport(metrics={"solves": len(done), "mean_full_solve_s": float(np.mean([d["time"] for d in full])),
                                "mean_rows": float(np.mean([d["rows"] for d in full]))}
                       | {f"{family}.{split}.unproved": len(runs) for family, splits in left_out.items()
                          for split, runs in splits.items()})


# ---------------------------------------------------------------- train

def load_split(root: Path, family: str, split: str) -> list[Trajectory]:
    return [load_trajectory(p) for p in sorted(instance_dir(root, family, split).glob("*.npz"))]


def load_labels(root: Path, family: str, split: str) -> list[Trajectory]:
    """The split's full solves that SCIP proved optimal (trajectory.PROVED): the only labels. The
    others are left out here and counted by the solve stage (unproved.json)."""
    solves = load_split(root, family, split)
    labels = [t for t in solves if t.proved]
    if not labels:
        statuses = sorted({t.status for t in solves})
        raise RuntimeError(f"{family} {split}: SCIP proved none of its {len(solves)} solves optimal (statuses {statuses}), "
                           "so there is no label; raise node_limit / time_limit or shrink the instances")
    return labels


def unproved_counts(trajectories: Path, family: str) -> dict[str, int]:
    """How many solves of each split were left out as unproved (the solve stage's unproved.json)."""
    left_out = json.loads((trajectories / "unproved.json").read_text()).get(family, {})
    return {split: len(left_out.get(split, {})) for split in SPLITS}


def loss_scale(family: Family, trajectories) -> float:
    """eps_a of the weighted relative-L1 loss: the family's, else max(1e-3 median |U_final|, 1)."""
    if family.eps_a is not None:
        return family.eps_a
    return max(1e-3 * float(np.median([abs(t.final_ub) for t in trajectories])), 1.0)


@flow(name="mip_early_stop-train", task_runner=task_runner())
def train(params: Params, context: StageContext) -> StageReport:
    single_torch_thread()
    trajectories = context.data("trajectories")
    models = context.out("models")
    models.mkdir(parents=True)
    curves, metrics, rows = {}, {}, []
    for family in params.families:
        data = load_labels(trajectories, family.name, "train")
        eps_a = loss_scale(family, data)
        net = params.network
        model, normalizer, curve = train_model(data, hidden=net.hidden, layers=net.layers, steps=net.steps, batch=net.batch,
                                               lr=net.lr, eps_a=eps_a, seed=derive_seed(params.seed, "train", family.name),
                                               device=context.device)
        save_model(models / f"{family.name}.pt", model, normalizer,
                   {"family": family.name, "eps_a": eps_a, "sample_dt": params.sample_dt, "hidden": net.hidden,
                    "layers": net.layers})
        curves[f"train_loss.{family.name}"] = curve  # (step, minibatch loss) pairs
        rows += [{"family": family.name, "step": step, "loss": loss} for step, loss in curve]
        metrics[f"{family.name}.final_loss"] = curve[-1][1]
        metrics[f"{family.name}.eps_a"] = eps_a
    write_csv(context.out("train_curve.csv"), rows)
    return StageReport(metrics=metrics, curves=curves)


# ---------------------------------------------------------------- calibrate

@flow(name="mip_early_stop-calibrate", task_runner=task_runner())
def calibrate(params: Params, context: StageContext) -> StageReport:
    single_torch_thread()
    trajectories = context.data("trajectories")
    stoppers = context.out("stoppers")
    stoppers.mkdir(parents=True)
    calibration, metrics = {}, {}
    for family in params.families:
        model, normalizer, meta = load_model(context.data("models", f"{family.name}.pt"))
        cal = load_labels(trajectories, family.name, "cal")
        seen = load_labels(trajectories, family.name, "train") + cal
        result = calibrate_family(cal, model.predict, params.alpha, params.epsilon, params.quantile)
        calibration[family.name] = result
        # The stopper bundle: the model plus what `papers mip-early-stop stop` needs to stop a new solve alike.
        save_model(stoppers / f"{family.name}.pt", model, normalizer,
                   meta | {"scores": result["network"]["scores"], "epsilon": params.epsilon, "alpha": params.alpha,
                           "quantile": params.quantile, "gap": params.gap, "time_limit": params.time_limit, "node_limit": params.node_limit,
                           "bound": solver.BOUNDS[family.name], "signature": signature(seen)})
        metrics |= {f"{family.name}.tau": result["network"]["tau"], f"{family.name}.tau_gap_rule": result["gap_rule"]["tau"],
                    f"{family.name}.tau_time_limit": result["time_limit"]["tau"], f"{family.name}.n_cal": len(cal)}
    write_json(context.out("calibration.json"), calibration)
    return StageReport(metrics={k: v for k, v in metrics.items() if np.isfinite(v)},
                       models={f"{PAPER}-{f.name}": f"stoppers/{f.name}.pt" for f in params.families})


# ---------------------------------------------------------------- evaluate

@stage_task
def resolve_online(mps: Path, family: str, stopper_path: Path, settings: dict) -> dict:
    """Re-solve with the network stopping SCIP from inside the event handler (interruptSolve);
    the stopper's own inference time is measured in the same solve. rule_index: where the rule
    fires on the rows this solve recorded (its own predictions), which the online stop must equal;
    stop_t: the feature clock (CPU seconds) at the stop, or at the end if it did not stop."""
    single_torch_thread()
    stopper = NetworkStopper.load(stopper_path)
    trajectory, _ = solver.solve(mps, family=family, bound=solver.BOUNDS[family], stopper=stopper, **settings)
    at = trajectory.info["stopped_at"]
    fired = at is not None and scip_gap(float(trajectory.ub[at]), float(trajectory.lb[at])) > settings["gap"]
    seen = len(stopper.predictions)
    return {"instance": mps.stem, "objective": float(trajectory.ub[-1]), "time": trajectory.solve_time,
            "status": trajectory.status, "fired": fired, "stopped_at": at,
            "rule_index": first_fire(stopper.predictions, trajectory.nsols[:seen], stopper.tau),
            "stop_t": float(trajectory.t[-1 if at is None else at]), "inference_s": stopper.inference_s,
            "inferences": stopper.inferences}


@flow(name="mip_early_stop-evaluate", task_runner=task_runner("process"))
def evaluate(params: Params, context: StageContext) -> StageReport:
    single_torch_thread()
    trajectories = context.data("trajectories")
    baselines = context.data("baselines")
    calibration = json.loads(context.data("calibration.json").read_text())
    instances = context.data("instances")
    rows, claims, metrics, online_rows = [], [], {}, []
    plot_data = {}
    for family in params.families:
        stopper_path = context.data("stoppers", f"{family.name}.pt")
        model, _, _ = load_model(stopper_path)
        cal, test = load_labels(trajectories, family.name, "cal"), load_labels(trajectories, family.name, "test")
        left_out = unproved_counts(trajectories, family.name)
        limits = {k: load_split(baselines / f"bestsol{k}", family.name, "") for k in (1, 3)}
        subset = [instance_dir(instances, family.name, "test") / f"{t.instance}.mps" for t in test[:params.online_subset]]
        futures = [resolve_online.submit(mps, family.name, stopper_path,
                                         solver_settings(params, derive_seed(params.seed, "scip", mps.stem)))
                   for mps in subset]
        runs = [f.result() | {"family": family.name} for f in futures]
        outcome = evaluate_family(cal, test, limits, calibration[family.name], model.predict, online_inference(runs),
                                  params.alpha, params.epsilon, params.quantile, params.coverage_splits,
                                  derive_seed(params.seed, "splits", family.name), params.gap)
        rows += [{"family": family.name, **row} for row in outcome["rows"]]
        online = compare_online(runs, outcome["rows"], {t.instance: t for t in test}, params.sample_dt)
        online_rows += online
        claims += family_claims(family.name, outcome, online, alpha=params.alpha, quantile=params.quantile,
                                coverage_splits=params.coverage_splits, speed_ratio=params.speed_ratio,
                                min_coverage_mean=params.min_coverage_mean, min_coverage_fixed=params.min_coverage_fixed,
                                seed=params.seed, decide_claims=params.decide_claims, unproved=left_out)
        metrics |= {f"{family.name}.{k}": v for k, v in outcome["summary"].items()}
        metrics |= {f"{family.name}.{split}.unproved": n for split, n in left_out.items()}
        metrics[f"{family.name}.online_replay_agreement"] = float(np.mean([o["agree"] for o in online]))
        metrics[f"{family.name}.online_stop_time_agreement"] = float(np.mean([o["stop_time_agrees"] for o in online]))
        metrics[f"{family.name}.online_over_replay_time"] = float(np.mean([o["online_time_s"] for o in online])
                                                                  / np.mean([o["replay_time_s"] for o in online]))
        plot_data[family.name] = outcome | {"examples": [(t, outcome["predictions"][t.instance]) for t in test[:3]]}
    write_csv(context.out("results.csv"), rows)
    write_csv(context.out("online.csv"), online_rows or [{"family": "", "instance": ""}])
    folder = context.out("plots")
    for name, data in plot_data.items():
        plots.coverage_plot(data["split_coverages"], 1 - params.alpha, name, folder / f"{name}_coverage.png")
        plots.time_saving_plot(data["rows"], name, folder / f"{name}_time_saving.png")
        plots.gap_trajectories_plot(data["examples"], calibration[name]["network"]["tau"], name, folder / f"{name}_gaps.png")
    return StageReport(metrics={k: v for k, v in metrics.items() if isinstance(v, (int, float)) and np.isfinite(v)},
                       claims=claims, headline=headline(metrics, params))


def headline(metrics: dict, params: Params) -> dict:
    """metrics.json beside the claims (C2 is the method's time ratio): for the first two families the time ratios
    of the oracle, the calibrated gap rule and the calibrated time limit (at most six numbers; everything else is
    in claims.json and MLflow)."""
    ratios = {"oracle_ratio": "oracle_ratio", "gap_rule_ratio": "gap_rule.ratio_of_means",
              "time_limit_ratio": "time_limit.ratio_of_means"}
    return {f"{f.name}.{name}": metrics[f"{f.name}.{key}"] for f in params.families[:2] for name, key in ratios.items()}


STAGES = {"generate": generate, "solve": solve, "train": train, "calibrate": calibrate, "evaluate": evaluate}
