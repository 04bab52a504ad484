"""Neural QAOA^2: learned partitions and initial angles for divide-and-conquer QAOA (ICML 2026).

Stages: generate (graphs imitating Biq Mac families, reference optima), solve (QAOA^2 runs of
the baseline policies on the training graphs: the critic's training samples), train (critic,
then generator against the frozen critic), evaluate (all five policies on the test graphs,
held-out critic samples, claims). QAOA^2 runs fan out as Prefect tasks on worker processes.
"""
from __future__ import annotations

from collections import Counter
from functools import lru_cache
from pathlib import Path

import numpy as np
from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from flows.runtime import task_runner
from tasks.core.claims import claims_document
from tasks.core.device import single_torch_thread
from tasks.core.io import write_csv, write_json
from tasks.core.seeding import derive_seed
from tasks.core.stage import StageContext, StageReport
from tasks.quantum import dataset, instances
from tasks.quantum.critic import train_critic
from tasks.quantum.features import to_tensors
from tasks.quantum.generator import policy_from_networks, save_networks, train_generator
from tasks.quantum.qaoa2 import baseline_policy, qaoa_squared

from . import evaluation, plots
from .params import Params

PAPER = "neural_qaoa2"
DATA = Path("data") / PAPER
BASELINES = ("random", "modularity", "boundary", "kl")
POLICIES = (*BASELINES, "neural")


# ---------------------------------------------------------------- generate

def graph_specs(params: Params) -> list[tuple[str, str, str, int, int]]:
    """(split, name, family, size, seed) of every graph of the profile."""
    specs, seen = [], Counter()
    for split, sets in (("train", [params.train]), ("test_id", [params.test_id]), ("test_ood", params.test_ood)):
        for graph_set in sets:
            for family in graph_set.families:
                for size in graph_set.sizes:  # a size may repeat (sizes: [40, 50, 50]): number them on
                    for _ in range(graph_set.count):
                        name = f"{family}_{size}_{seen[split, family, size]}"
                        seen[split, family, size] += 1
                        specs.append((split, name, family, size, derive_seed(params.seed, split, name)))
    return specs


@task(cache_policy=NO_CACHE, retries=2, retry_delay_seconds=1)
def make_graph(folder: Path, split: str, name: str, family: str, size: int, seed: int, exact_up_to: int,
               restarts: int) -> dict:
    rng = np.random.default_rng(seed)
    graph = instances.FAMILIES[family](size, rng)
    path = folder / split / f"{name}.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    instances.write_graph(path, graph)
    exact = graph.n <= exact_up_to
    optimum, _ = (instances.brute_force_maxcut(graph) if exact
                  else instances.local_search_maxcut(graph, restarts=restarts, rng=rng))
    return {"split": split, "name": name, "family": family, "n": graph.n, "m": len(graph.edges),
            "optimum": float(optimum), "exact": exact, "sum_negative": graph.sum_negative}


@flow(name="neural_qaoa2-generate", task_runner=task_runner("process"))
def generate(params: Params, context: StageContext) -> StageReport:
    folder = context.out(str(DATA / "graphs"))
    futures = [make_graph.submit(folder, *spec, params.exact_up_to, params.local_search_restarts)
               for spec in graph_specs(params)]
    reference = {f"{r['split']}/{r['name']}": r for r in (f.result() for f in futures)}
    write_json(context.out(str(DATA / "reference.json")), reference)
    return StageReport(metrics={f"graphs.{split}": sum(r["split"] == split for r in reference.values())
                                for split in ("train", "test_id", "test_ood")}
                       | {"exact_fraction": float(np.mean([r["exact"] for r in reference.values()]))})


# ---------------------------------------------------------------- solve (critic data)

def qaoa_options(params: Params) -> dict:
    q = params.qaoa
    return {"n_max": q.n_max, "steps": q.steps, "lr": q.lr, "shots": q.shots}


@task(cache_policy=NO_CACHE)
def baseline_run(graph_path: Path, level0: str, seed: int, options: dict) -> dict:
    """One QAOA^2 run: `level0` partitions the original graph, random deeper; U[0, 2pi) angles."""
    graph = instances.read_biqmac(graph_path)
    first, rest = baseline_policy(level0), baseline_policy("random")

    def policy(g, n_max, rng, level):
        return (first if level == 0 else rest)(g, n_max, rng, level)

    result = qaoa_squared(graph, policy, rng=np.random.default_rng(seed), **options)
    return {"graph": graph_path.stem, "level0": level0, "cut": result.cut, "time_s": result.time_s,
            "parts": [p.tolist() for p in result.level0_parts], "params": [list(map(float, p)) for p in result.level0_params]}


def level0_choices(params: Params, rng: np.random.Generator, count: int) -> list[str]:
    names = list(params.level0_mix)
    weights = np.array([params.level0_mix[n] for n in names], dtype=float)
    return list(rng.choice(names, size=count, p=weights / weights.sum()))


@flow(name="neural_qaoa2-solve", task_runner=task_runner("process"))
def solve(params: Params, context: StageContext) -> StageReport:
    graphs = context.data(str(DATA / "graphs"))
    reference = dataset.load_reference(context.data(str(DATA / "reference.json")))
    rng = np.random.default_rng(derive_seed(params.seed, "critic-data"))
    jobs = []
    for path in sorted((graphs / "train").glob("*.txt")):
        for run, level0 in enumerate(level0_choices(params, rng, params.runs_per_train_graph)):
            jobs.append(baseline_run.submit(path, level0, derive_seed(params.seed, "train-run", path.stem, run),
                                            qaoa_options(params)))
    runs = [job.result() for job in jobs]
    samples = dataset.label_runs(runs, reference, "train")
    write_json(context.out(str(DATA / "critic_data.json")), samples)
    by_policy = {p: [s["rho"] for s in samples if s["level0"] == p] for p in params.level0_mix}
    return StageReport(metrics={"samples": len(samples)}
                       | {f"rho_mean.{p}": float(np.mean(v)) for p, v in by_policy.items() if v})


# ---------------------------------------------------------------- train

@flow(name="neural_qaoa2-train", task_runner=task_runner())
def train(params: Params, context: StageContext) -> StageReport:
    single_torch_thread()
    graphs = context.data(str(DATA / "graphs"))
    samples = dataset.load_samples(context.data(str(DATA / "critic_data.json")), graphs)
    c, g = params.critic, params.generator
    critic, critic_curve = train_critic(samples, width=c.width, layers=c.layers, epochs=c.epochs,
                                        seed=derive_seed(params.seed, "critic"))
    train_graphs = [to_tensors(instances.read_biqmac(p)) for p in sorted((graphs / "train").glob("*.txt"))]
    generator, generator_curve = train_generator(critic, train_graphs, n_max=params.qaoa.n_max, width=g.width,
                                                 layers=g.layers, epochs=g.epochs, batch=g.batch, lr=g.lr,
                                                 seed=derive_seed(params.seed, "generator"))
    save_networks(context.out(str(DATA / "networks.pt")), critic, generator,
                  {"critic": c.model_dump(), "generator": g.model_dump(), "n_max": params.qaoa.n_max})
    write_csv(context.out(str(DATA / "train_curves.csv")),
              [{"network": "critic", **row} for row in critic_curve] + [{"network": "generator", **row} for row in generator_curve])
    return StageReport(metrics={"critic.samples": len(samples), "critic.best_val_mse": min(r["val_mse"] for r in critic_curve)},
                       curves={f"{network}.{key}": [row[key] for row in curve]
                               for network, curve in (("critic", critic_curve), ("generator", generator_curve))
                               for key in curve[0] if key != "epoch"},
                       models={f"{PAPER}-networks": str(DATA / "networks.pt")})


# ---------------------------------------------------------------- evaluate

@lru_cache(maxsize=1)
def neural(path: str, tta_steps: int):
    """The Neural policy of the trained networks, loaded once per worker process."""
    single_torch_thread()
    return policy_from_networks(Path(path), tta_steps)


def make_policy(name: str, networks_path: Path, tta_steps: int):
    if name == "neural":
        return neural(str(networks_path), tta_steps)
    if name == evaluation.ABLATION:
        return evaluation.with_random_angles(neural(str(networks_path), tta_steps))
    return baseline_policy(name)


@task(cache_policy=NO_CACHE)
def policy_run(graph_path: Path, policy_name: str, seed: int, options: dict, networks_path: Path, tta_steps: int) -> dict:
    graph = instances.read_biqmac(graph_path)
    policy = make_policy(policy_name, networks_path, tta_steps)
    result = qaoa_squared(graph, policy, rng=np.random.default_rng(seed), **options)
    return {"split": graph_path.parent.name, "graph": graph_path.stem, "policy": policy_name, "seed": seed,
            "cut": result.cut, "time_s": result.time_s, "levels": result.levels,
            "parts": [p.tolist() for p in result.level0_parts], "params": [list(map(float, p)) for p in result.level0_params]}


@flow(name="neural_qaoa2-evaluate", task_runner=task_runner("process"))
def evaluate(params: Params, context: StageContext) -> StageReport:
    single_torch_thread()  # the critic scores held-out runs one small graph at a time
    graphs = context.data(str(DATA / "graphs"))
    networks_path = context.data(str(DATA / "networks.pt"))
    reference = dataset.load_reference(context.data(str(DATA / "reference.json")))
    test_paths = sorted((graphs / "test_id").glob("*.txt")) + sorted((graphs / "test_ood").glob("*.txt"))
    jobs = [policy_run.submit(path, policy, derive_seed(params.seed, "eval", path.stem, policy, run), qaoa_options(params),
                              networks_path, params.generator.tta_steps)
            for path in test_paths for policy in (*POLICIES, evaluation.ABLATION) for run in range(params.runs_per_test_graph)]
    rng = np.random.default_rng(derive_seed(params.seed, "heldout"))
    heldout_paths, heldout_jobs = [], []
    for path in test_paths:  # held-out critic samples: mixed level-0 partitions, random angles
        for k, level0 in enumerate(level0_choices(params, rng, params.heldout_samples_per_graph)):
            heldout_paths.append(path)
            heldout_jobs.append(baseline_run.submit(path, level0, derive_seed(params.seed, "heldout-run", path.stem, k),
                                                    qaoa_options(params)))
    runs = [job.result() for job in jobs]
    heldout = [job.result() | {"split": path.parent.name} for job, path in zip(heldout_jobs, heldout_paths)]
    outcome = evaluation.evaluate_runs(runs, heldout, reference, graphs, networks_path)
    claims = evaluation.claims(outcome, min_gain=params.min_gain, min_win_fraction=params.min_win_fraction,
                                min_correlation=params.min_correlation, decide=params.decide_claims)
    write_json(context.out(str(DATA / "claims.json")), claims_document(PAPER, context.profile, context.commit, claims))
    write_csv(context.out(str(DATA / "runs.csv")), outcome["rows"])
    write_csv(context.out(str(DATA / "per_graph.csv")), outcome["per_graph"])
    write_json(context.out(str(DATA / "metrics.json")), outcome["summary"])
    folder = context.out(str(DATA / "plots"))
    plots.rho_per_policy(outcome["per_graph"], (*POLICIES, evaluation.ABLATION), folder / "rho_per_policy.png")
    plots.critic_calibration(outcome["heldout"], folder / "critic_calibration.png")
    return StageReport(metrics=outcome["summary"], tags={f"claim.{c.id}": str(c.passed) for c in claims})


STAGES = {"generate": generate, "solve": solve, "train": train, "evaluate": evaluate}
