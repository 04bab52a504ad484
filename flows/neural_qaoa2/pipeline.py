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
from prefect import flow

from flows.runtime import task_runner
from flows.stage_task import stage_task
from tasks.core.device import single_torch_thread
from tasks.core.io import write_csv, write_json
from tasks.core.seeding import derive_seed
from tasks.core.stage import StageContext, StageReport
from tasks.quantum import dataset, instances
from tasks.quantum.critic import train_critic, validation_ranking
from tasks.quantum.exact import scip_maxcut
from tasks.quantum.features import to_tensors
from tasks.quantum.generator import policy_from_networks, save_networks, train_generator
from tasks.quantum.qaoa2 import baseline_policy, qaoa_squared

from . import evaluation, plots
from .params import Params

PAPER = "neural_qaoa2"
BASELINES = ("random", "modularity", "boundary", "kl")
POLICIES = (*BASELINES, "neural")
HEADLINE = ("test_id.neural.mean_rho", "test_id.kl.mean_rho", "test_id.random.mean_rho", "critic.mean_spearman",
            "intra_share.mean_spearman", "references.proved")


# ---------------------------------------------------------------- generate

LOWER_BOUND = "lower_bound"  # a reference that is not proved optimal: the best cut known

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


@stage_task(retries=2, retry_delay_seconds=1)
def make_graph(folder: Path, split: str, name: str, family: str, size: int, seed: int, params: Params) -> dict:
    """Write one graph and its reference: the best of `local_search_restarts` one-flip local searches,
    handed to SCIP (with odd-cycle cuts) as its start when the graph has at most `scip_max_edges` edges (denser
    ones SCIP does not prove within minutes); status 'proved' when SCIP closes the gap within its node limit,
    else 'lower_bound': the best cut known, a lower bound on the optimum (`upper_bound`: SCIP's dual bound where it
    ran), which the evaluation raises to every cut found in the run and labels as a bound wherever it is used."""
    rng = np.random.default_rng(seed)
    graph = instances.FAMILIES[family](size, rng)
    path = folder / split / f"{name}.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    instances.write_graph(path, graph)
    searched, sides = instances.local_search_maxcut(graph, restarts=params.local_search_restarts, rng=rng)
    entry = {"split": split, "name": name, "family": family, "n": graph.n, "m": len(graph.edges),
             "sum_negative": graph.sum_negative, "local_search": searched}
    if len(graph.edges) > params.scip_max_edges:
        return entry | {"optimum": searched, "status": LOWER_BOUND, "solver": "local_search", "bound": None, "gap": None}
    solved = scip_maxcut(graph, node_limit=params.scip_node_limit, time_limit=params.scip_time_limit, start=sides,
                         seed=seed % 2**30)
    return entry | {"optimum": solved.cut, "status": "proved" if solved.proved else LOWER_BOUND,
                    "solver": f"scip:{solved.status}", "bound": solved.bound, "gap": solved.gap, "nodes": solved.nodes,
                    "solver_time_s": solved.time_s}


@flow(name="neural_qaoa2-generate", task_runner=task_runner("process"))
def generate(params: Params, context: StageContext) -> StageReport:
    folder = context.out("graphs")
    futures = [make_graph.submit(folder, *spec, params) for spec in graph_specs(params)]
    reference = {f"{r['split']}/{r['name']}": r for r in (f.result() for f in futures)}
    write_json(context.out("reference.json"), reference)
    entries = list(reference.values())
    return StageReport(metrics={f"graphs.{split}": sum(r["split"] == split for r in entries)
                                for split in ("train", "test_id", "test_ood")}
                       | {"proved_fraction": float(np.mean([r["status"] == "proved" for r in entries])),
                          "scip_time_limit_hit": sum(r["solver"] == "scip:timelimit" for r in entries),
                          "local_search_below_reference": sum(r["local_search"] < r["optimum"] for r in entries)})


# ---------------------------------------------------------------- solve (critic data)

def qaoa_options(params: Params) -> dict:
    q = params.qaoa
    return {"n_max": q.n_max, "steps": q.steps, "lr": q.lr, "shots": q.shots}


@stage_task
def baseline_runs(graph_path: Path, plan: list[tuple[str, int]], options: dict) -> list[dict]:
    """QAOA^2 runs on one graph, one per (level0, seed) of `plan` (one task per graph: hundreds of
    0.1 s runs would otherwise pay a task's overhead each): `level0` partitions the original graph,
    random deeper; U[0, 2pi) angles."""
    graph, rest = instances.read_biqmac(graph_path), baseline_policy("random")
    runs = []
    for level0, seed in plan:
        first = baseline_policy(level0)

        def policy(g, n_max, rng, level, first=first):
            return (first if level == 0 else rest)(g, n_max, rng, level)

        result = qaoa_squared(graph, policy, rng=np.random.default_rng(seed), **options)
        runs.append({"graph": graph_path.stem, "split": graph_path.parent.name, "level0": level0, "cut": result.cut,
                     "time_s": result.time_s, "parts": [p.tolist() for p in result.level0_parts],
                     "params": [list(map(float, p)) for p in result.level0_params]})
    return runs


def level0_plan(params: Params, rng: np.random.Generator, count: int, *seed_keys) -> list[tuple[str, int]]:
    """`count` (level-0 policy drawn from the level0_mix, seed of the run) pairs."""
    names = list(params.level0_mix)
    weights = np.array([params.level0_mix[n] for n in names], dtype=float)
    return [(str(name), derive_seed(params.seed, *seed_keys, k))
            for k, name in enumerate(rng.choice(names, size=count, p=weights / weights.sum()))]


@flow(name="neural_qaoa2-solve", task_runner=task_runner("process"))
def solve(params: Params, context: StageContext) -> StageReport:
    graphs = context.data("graphs")
    reference = dataset.load_reference(context.data("reference.json"))
    rng = np.random.default_rng(derive_seed(params.seed, "critic-data"))
    jobs = [baseline_runs.submit(path, level0_plan(params, rng, params.runs_per_train_graph, "train-run", path.stem),
                                 qaoa_options(params))
            for path in sorted((graphs / "train").glob("*.txt"))]
    runs = [run for job in jobs for run in job.result()]
    samples = dataset.label_runs(runs, reference, "train")
    write_json(context.out("critic_data.json"), samples)
    by_policy = {p: [s["rho"] for s in samples if s["level0"] == p] for p in params.level0_mix}
    return StageReport(metrics={"samples": len(samples)}
                       | {f"rho_mean.{p}": float(np.mean(v)) for p, v in by_policy.items() if v})


# ---------------------------------------------------------------- train

@flow(name="neural_qaoa2-train", task_runner=task_runner())
def train(params: Params, context: StageContext) -> StageReport:
    single_torch_thread()
    graphs = context.data("graphs")
    samples = dataset.load_samples(context.data("critic_data.json"), graphs)
    c, g = params.critic, params.generator
    critic, critic_curve, val_graphs = train_critic(samples, width=c.width, layers=c.layers, epochs=c.epochs,
                                                    seed=derive_seed(params.seed, "critic"))
    ranking = validation_ranking(critic, samples, val_graphs)
    scorer = choose_scorer(ranking)
    train_graphs = [to_tensors(instances.read_biqmac(p)) for p in sorted((graphs / "train").glob("*.txt"))]
    generator, generator_curve = train_generator(critic, train_graphs, n_max=params.qaoa.n_max, width=g.width,
                                                 layers=g.layers, epochs=g.epochs, batch=g.batch, lr=g.lr,
                                                 seed=derive_seed(params.seed, "generator"), scorer=scorer)
    save_networks(context.out("networks.pt"), critic, generator,
                  {"critic": c.model_dump(), "generator": g.model_dump(), "n_max": params.qaoa.n_max, "scorer": scorer,
                   "validation_mean_spearman": ranking})
    write_csv(context.out("train_curves.csv"),
              [{"network": "critic", **row} for row in critic_curve] + [{"network": "generator", **row} for row in generator_curve])
    return StageReport(metrics={"critic.samples": len(samples), "critic.best_val_loss": min(r["val_loss"] for r in critic_curve),
                                "critic.validation_graphs": len(val_graphs), "scorer_is_critic": int(scorer == "critic")}
                       | {f"validation_mean_spearman.{name}": value for name, value in ranking.items()},
                       curves={f"{network}.{key}": [row[key] for row in curve]
                               for network, curve in (("critic", critic_curve), ("generator", generator_curve))
                               for key in curve[0] if key != "epoch"},
                       models={f"{PAPER}-networks": "networks.pt"})


def choose_scorer(ranking: dict[str, float]) -> str:
    """The scorer the generator maximises: the one with the higher mean within-graph Spearman on the critic's
    validation graphs; the critic (the paper's) on a tie or where the share's is undefined."""
    share, critic = (np.nan_to_num(ranking[name], nan=-np.inf) for name in ("intra_share", "critic"))
    return "intra_share" if share > critic else "critic"


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


@stage_task
def policy_runs(graph_path: Path, policy_name: str, seeds: list[int], options: dict, networks_path: Path,
                tta_steps: int) -> list[dict]:
    """The R evaluation runs of one policy on one graph."""
    graph = instances.read_biqmac(graph_path)
    policy = make_policy(policy_name, networks_path, tta_steps)
    runs = []
    for seed in seeds:
        result = qaoa_squared(graph, policy, rng=np.random.default_rng(seed), **options)
        runs.append({"split": graph_path.parent.name, "graph": graph_path.stem, "policy": policy_name, "seed": seed,
                     "cut": result.cut, "time_s": result.time_s, "levels": result.levels})
    return runs


@flow(name="neural_qaoa2-evaluate", task_runner=task_runner("process"))
def evaluate(params: Params, context: StageContext) -> StageReport:
    single_torch_thread()  # the critic scores held-out runs one small graph at a time
    graphs = context.data("graphs")
    networks_path = context.data("networks.pt")
    reference = dataset.load_reference(context.data("reference.json"))
    test_paths = sorted((graphs / "test_id").glob("*.txt")) + sorted((graphs / "test_ood").glob("*.txt"))
    jobs = [policy_runs.submit(path, policy, [derive_seed(params.seed, "eval", path.stem, policy, run)
                                              for run in range(params.runs_per_test_graph)],
                               qaoa_options(params), networks_path, params.generator.tta_steps)
            for path in test_paths for policy in (*POLICIES, evaluation.ABLATION)]
    rng = np.random.default_rng(derive_seed(params.seed, "heldout"))
    heldout_jobs = [baseline_runs.submit(path, level0_plan(params, rng, params.heldout_samples_per_graph, "heldout-run",
                                                           path.stem), qaoa_options(params))
                    for path in test_paths]  # held-out critic samples: the critic data's level-0 mix, random angles
    runs = [run for job in jobs for run in job.result()]
    heldout = [run for job in heldout_jobs for run in job.result()]
    outcome = evaluation.evaluate_runs(runs, heldout, reference, graphs, networks_path)
    claims = evaluation.claims(outcome, min_gain=params.min_gain, min_win_fraction=params.min_win_fraction,
                                min_correlation=params.min_correlation, seed=params.seed,
                                decide_claims=params.decide_claims)
    write_csv(context.out("runs.csv"), outcome["rows"])
    write_csv(context.out("per_graph.csv"), outcome["per_graph"])
    s = outcome["summary"]
    headline = {key: s[key] for key in HEADLINE}
    folder = context.out("plots")
    plots.rho_per_policy(outcome["per_graph"], (*POLICIES, evaluation.ABLATION), folder / "rho_per_policy.png")
    plots.critic_calibration(outcome["heldout"], folder / "critic_calibration.png")
    return StageReport(metrics=outcome["summary"], claims=claims, headline=headline)


STAGES = {"generate": generate, "solve": solve, "train": train, "evaluate": evaluate}
