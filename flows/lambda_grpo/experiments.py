"""The experiment recipes of lambda_grpo's stages, as plain functions of params and files (the flows only wire
them): the data splits and SFT traces, one SFT policy, the constant-answer baseline, the learning-rate sweep and its
choice, one RL run, the C1 gradient identity, the second family's params; and a run outside DVC
(`papers lambda-grpo train`): a profile's sizes, with steps, learning rate and seed of the user's choice."""
from __future__ import annotations

import itertools
import json
import tempfile
import threading
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

from tasks.core.inputs import InputError
from tasks.core.io import repo_root
from tasks.core.params import ParamsError, load_paper_params
from tasks.core.seeding import derive_seed
from tasks.lm import chain_arith as task
from tasks.lm.model import TinyLMConfig, build_model, load_model, num_parameters, save_model
from tasks.lm.sft import train_sft
from tasks.lm.training import TrainSetting

from .equivalence import gradient_identity
from .params import Params
from .rl import RLSetting, accuracy, greedy_rewards, run_rl, sample_groups

SECOND = "second"  # the folder of the second family's files inside each stage's output
# transformers' from_pretrained builds the model on the meta device under process-global state: two threads loading
# at once (the thread task runner: tests, in-memory flows) can see each other's meta tensors
_LOADING = threading.Lock()


def load_policy(policy: Path):
    with _LOADING:
        model, _, _ = load_model(policy)
    return model


def model_config(params: Params) -> TinyLMConfig:
    m = params.model
    return TinyLMConfig(**m.model_dump())


def write_jsonl(path: Path, rows) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line]


# ---------------------------------------------------------------- data

def family_params(params: Params) -> Params:
    """The second family as a profile of its own: its task, SFT budget and context, everything else shared."""
    second = params.second
    return params.model_copy(update={"task": second.task, "second": None,
                                     "sft": params.sft.model_copy(update={"steps": second.sft_steps}),
                                     "model": params.model.model_copy(update={"context": second.context})})


def save_problems(params: Params, folder: Path) -> dict[str, float]:
    """val.jsonl, test.jsonl and tune.jsonl (the learning-rate sweep's validation prompts): fixed sets of distinct
    prompts, pairwise disjoint. val and test are drawn first, as before the tune split existed."""
    t = params.task
    rng = np.random.default_rng(derive_seed(params.seed, "splits"))
    val = task.distinct_problems(rng, t.val_size, t.k_min, t.k_max, modulus=t.modulus)
    test = task.distinct_problems(rng, t.test_size, t.k_min, t.k_max, exclude=set(val), modulus=t.modulus)
    tune = task.distinct_problems(rng, t.tune_size, t.k_min, t.k_max, exclude=set(val) | set(test), modulus=t.modulus)
    for name, problems in (("val", val), ("test", test), ("tune", tune)):
        write_jsonl(folder / f"{name}.jsonl", (p.to_json() for p in problems))
    return {"val_size": len(val), "test_size": len(test), "tune_size": len(tune),
            "mean_k_test": float(np.mean([p.k for p in test]))}


def load_problems(folder: Path, name: str) -> list[task.ChainProblem]:
    return [task.ChainProblem.from_json(row) for row in read_jsonl(folder / f"{name}.jsonl")]


def sft_traces(params: Params, path: Path) -> float:
    """The noisy teacher's traces on fresh training prompts; returns the fraction with an error."""
    t = params.task
    rng = np.random.default_rng(derive_seed(params.seed, "sft-traces"))
    rows = []
    for _ in range(t.sft_traces):
        problem = task.sample_problem(rng, t.k_min, t.k_max, t.modulus)
        completion, noisy = task.teacher_completion(problem, t.p_err, rng)
        rows.append(problem.to_json() | {"completion": completion, "noisy": noisy})
    write_jsonl(path, rows)
    return float(np.mean([r["noisy"] for r in rows]))


# ---------------------------------------------------------------- SFT

def initial_accuracy(model, params: Params, val: list[task.ChainProblem], seed: int) -> dict:
    r = params.rl
    rewards = greedy_rewards(model, val, params.task.k_max)
    return {"greedy_val": float(np.mean(rewards)), "greedy_val_rewards": rewards,
            "sampled_val": accuracy(model, val, params.task.k_max, greedy=False, samples=r.eval_samples,
                                    temperature=r.temperature, seed=derive_seed(seed, "eval", 0))}


def sft_policy(params: Params, generated: Path, out: Path, seed: int, device: str) -> dict:
    """Train one SFT policy from scratch on the traces, save it (safetensors), report its losses and accuracy."""
    traces = read_jsonl(generated / "sft_traces.jsonl")
    prompts = [task.ChainProblem.from_json(row).prompt_ids() for row in traces]
    completions = [row["completion"] for row in traces]
    config = model_config(params)
    model = build_model(config, task.VOCAB, derive_seed(seed, "init")).to(device)
    s = params.sft
    losses = train_sft(model, prompts, completions, TrainSetting(s.steps, s.batch, s.lr), derive_seed(seed, "batches"),
                       task.VOCAB.pad)
    save_model(model, out, task.VOCAB, config)
    return {"seed": seed, "losses": losses, "parameters": num_parameters(model)} | initial_accuracy(
        model, params, load_problems(generated, "val"), seed)


def constant_answer(generated: Path) -> dict:
    """The baseline SFT must beat: always answering the most common true answer of the SFT training prompts (ties:
    the smallest), and its reward on each validation prompt."""
    counts = Counter(task.ChainProblem.from_json(row).answer for row in read_jsonl(generated / "sft_traces.jsonl"))
    answer = min(counts, key=lambda a: (-counts[a], a))
    return {"answer": answer, "val_rewards": [float(p.answer == answer) for p in load_problems(generated, "val")]}


# ---------------------------------------------------------------- RL

def rl_settings(params: Params, lr: float) -> list[dict]:
    """Every (group size, aggregation) of the profile at the learning rate `lr`; the first is the primary one."""
    r = params.rl
    return [{"group_size": G, "lr": lr, "aggregation": agg}
            for G, agg in itertools.product(r.group_sizes, r.aggregations)]


def tune_setting(params: Params, lr: float) -> dict:
    """A run of the learning-rate sweep: the primary group size and aggregation at `lr`."""
    return rl_settings(params, lr)[0]


def tune_run(params: Params, generated: Path, policy: Path, lr: float, method: str, device: str) -> dict:
    """One run of the sweep: `tune_steps` RL steps from `policy`, evaluated on the tune prompts; every learning rate
    and both methods share the prompt stream and sampling seeds."""
    model = load_policy(policy)
    setting = replace(rl_setting(params, tune_setting(params, lr)), steps=params.rl.tune_steps)
    return run_rl(model.to(device), method, setting, derive_seed(params.seed, "tune"), load_problems(generated, "tune"),
                  None) | {"lr": lr}


def sweep_score(runs: list[dict]) -> float:
    """A learning rate's score: the mean over its runs (both methods) of the mean greedy tune accuracy over the
    evaluations after step 0 (rewards learning early and staying up; favours neither method)."""
    return float(np.mean([np.mean([e["greedy"] for e in r["evals"][1:]]) for r in runs]))


def chosen_lr(runs: list[dict]) -> tuple[float, dict[float, float]]:
    """The learning rate of the best sweep score (ties: the smallest), and every rate's score."""
    scores = {lr: sweep_score([r for r in runs if r["lr"] == lr]) for lr in sorted({r["lr"] for r in runs})}
    return max(scores, key=lambda lr: (scores[lr], -lr)), scores


def run_label(setting: dict, method: str, k: int) -> str:
    return f"{method}_G{setting['group_size']}_lr{setting['lr']:g}_{setting['aggregation']}_seed{k}"


def rl_setting(params: Params, setting: dict) -> RLSetting:
    r = params.rl
    return RLSetting(steps=r.steps, prompts_per_step=r.prompts_per_step, group_size=setting["group_size"],
                     lr=setting["lr"], temperature=r.temperature, aggregation=setting["aggregation"],
                     k_min=params.task.k_min, k_max=params.task.k_max, eval_every=r.eval_every,
                     eval_samples=r.eval_samples, modulus=params.task.modulus)


def rl_run(params: Params, generated: Path, policy: Path, setting: dict, method: str, seed: int, device: str) -> dict:
    model = load_policy(policy)
    return run_rl(model.to(device), method, rl_setting(params, setting), seed, load_problems(generated, "val"),
                  load_problems(generated, "test"))


# ---------------------------------------------------------------- C1

def c1_identity(params: Params, generated: Path, policy: Path) -> dict:
    """The gradient identity of C1 in float64 on `c1_groups` groups sampled from an SFT policy (primary G; the
    learning rate plays no part)."""
    model, _, _ = load_model(policy, dtype=torch.float64)
    t = params.task
    rng = np.random.default_rng(derive_seed(params.seed, "c1-prompts"))
    problems = [task.sample_problem(rng, t.k_min, t.k_max, t.modulus) for _ in range(params.c1_groups)]
    setting = rl_setting(params, tune_setting(params, params.rl.lr_grid[0]))
    groups, rewards, _ = sample_groups(model, problems, setting, derive_seed(params.seed, "c1-sample"))
    return gradient_identity(model, [p.prompt_ids() for p in problems], groups, rewards, task.VOCAB.pad)


# ---------------------------------------------------------------- outside DVC

def train_outside_dvc(profile: str, method: str, sft_steps: int | None, rl_steps: int | None, seed: int,
                      lr: float | None = None) -> dict:
    """A profile's sizes, SFT and RL from one seed; RL at `lr` (default: the first of the profile's lr_grid, no
    sweep outside DVC)."""
    from tasks.core.device import resolve_device, single_torch_thread

    try:
        params = load_paper_params(repo_root(Path(__file__).parent), "lambda_grpo", profile, Params)
    except ParamsError as error:
        raise InputError(f"--profile: {error.problems[0]}") from None
    params = params.model_copy(update={
        "seed": seed, "sft": params.sft.model_copy(update={"steps": sft_steps or params.sft.steps}),
        "rl": params.rl.model_copy(update={"steps": rl_steps or params.rl.steps})})
    single_torch_thread()
    device = resolve_device(params.device)
    methods = ("grpo", "lambda_grpo") if method == "both" else (method,)
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        save_problems(params, folder)
        sft_traces(params, folder / "sft_traces.jsonl")
        sft = sft_policy(params, folder, folder / "policy", derive_seed(seed, "sft", 0), device)
        setting = rl_settings(params, lr or params.rl.lr_grid[0])[0]
        results = {m: rl_run(params, folder, folder / "policy", setting, m, derive_seed(seed, "rl", 0), device)
                   for m in methods}
    return {"profile": profile, "seed": seed, "lr": setting["lr"], "parameters": sft["parameters"], "initial_greedy_val": sft["greedy_val"],
            "methods": {m: {"best_val": r["best_val"], "best_step": r["best_step"], "test": r["test_at_best"],
                            "final_val": r["evals"][-1]["greedy"],
                            "median_step_s": float(np.median([s["wall_time_s"] for s in r["steps"]]))}
                        for m, r in results.items()}}
