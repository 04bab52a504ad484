"""The experiment recipes of lambda_grpo's stages, as plain functions of params and files (the flows only wire
them): the data splits and SFT traces, one SFT policy, one RL run, the C1 gradient identity; and a run outside DVC
(`papers lambda-grpo train`): a profile's sizes, with steps and seed of the user's choice."""
from __future__ import annotations

import itertools
import json
import tempfile
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
from .rl import RLSetting, accuracy, run_rl, sample_groups


def model_config(params: Params) -> TinyLMConfig:
    m = params.model
    return TinyLMConfig(**m.model_dump())


def write_jsonl(path: Path, rows) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line]


# ---------------------------------------------------------------- data

def save_problems(params: Params, folder: Path) -> dict[str, float]:
    """val.jsonl and test.jsonl: fixed sets of distinct prompts, disjoint from each other."""
    t = params.task
    rng = np.random.default_rng(derive_seed(params.seed, "splits"))
    val = task.distinct_problems(rng, t.val_size, t.k_min, t.k_max)
    test = task.distinct_problems(rng, t.test_size, t.k_min, t.k_max, exclude=set(val))
    for name, problems in (("val", val), ("test", test)):
        write_jsonl(folder / f"{name}.jsonl", (p.to_json() for p in problems))
    return {"val_size": len(val), "test_size": len(test), "mean_k_test": float(np.mean([p.k for p in test]))}


def load_problems(folder: Path, name: str) -> list[task.ChainProblem]:
    return [task.ChainProblem.from_json(row) for row in read_jsonl(folder / f"{name}.jsonl")]


def sft_traces(params: Params, path: Path) -> float:
    """The noisy teacher's traces on fresh training prompts; returns the fraction with an error."""
    t = params.task
    rng = np.random.default_rng(derive_seed(params.seed, "sft-traces"))
    rows = []
    for _ in range(t.sft_traces):
        problem = task.sample_problem(rng, t.k_min, t.k_max)
        completion, noisy = task.teacher_completion(problem, t.p_err, rng)
        rows.append(problem.to_json() | {"completion": completion, "noisy": noisy})
    write_jsonl(path, rows)
    return float(np.mean([r["noisy"] for r in rows]))


# ---------------------------------------------------------------- SFT

def initial_accuracy(model, params: Params, val: list[task.ChainProblem], seed: int) -> dict[str, float]:
    r = params.rl
    return {"greedy_val": accuracy(model, val, params.task.k_max, greedy=True),
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


# ---------------------------------------------------------------- RL

def rl_settings(params: Params) -> list[dict]:
    """Every (group size, lr, aggregation) of the profile; the first is the primary one."""
    r = params.rl
    return [{"group_size": G, "lr": lr, "aggregation": agg}
            for G, lr, agg in itertools.product(r.group_sizes, r.lrs, r.aggregations)]


def run_label(setting: dict, method: str, k: int) -> str:
    return f"{method}_G{setting['group_size']}_lr{setting['lr']:g}_{setting['aggregation']}_seed{k}"


def rl_setting(params: Params, setting: dict) -> RLSetting:
    r = params.rl
    return RLSetting(steps=r.steps, prompts_per_step=r.prompts_per_step, group_size=setting["group_size"],
                     lr=setting["lr"], temperature=r.temperature, aggregation=setting["aggregation"],
                     k_min=params.task.k_min, k_max=params.task.k_max, eval_every=r.eval_every,
                     eval_samples=r.eval_samples)


def rl_run(params: Params, generated: Path, policy: Path, setting: dict, method: str, seed: int, device: str) -> dict:
    model, _, _ = load_model(policy)
    return run_rl(model.to(device), method, rl_setting(params, setting), seed, load_problems(generated, "val"),
                  load_problems(generated, "test"))


# ---------------------------------------------------------------- C1

def c1_identity(params: Params, generated: Path, policy: Path) -> dict:
    """The gradient identity of C1 in float64 on `c1_groups` groups sampled from an SFT policy (primary G)."""
    model, _, _ = load_model(policy, dtype=torch.float64)
    rng = np.random.default_rng(derive_seed(params.seed, "c1-prompts"))
    problems = [task.sample_problem(rng, params.task.k_min, params.task.k_max) for _ in range(params.c1_groups)]
    setting = rl_setting(params, rl_settings(params)[0])
    groups, rewards, _ = sample_groups(model, problems, setting, derive_seed(params.seed, "c1-sample"))
    return gradient_identity(model, [p.prompt_ids() for p in problems], groups, rewards, task.VOCAB.pad)


# ---------------------------------------------------------------- outside DVC

def train_outside_dvc(profile: str, method: str, sft_steps: int | None, rl_steps: int | None, seed: int) -> dict:
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
        results = {m: rl_run(params, folder, folder / "policy", rl_settings(params)[0], m, derive_seed(seed, "rl", 0),
                             device) for m in methods}
    return {"profile": profile, "seed": seed, "parameters": sft["parameters"], "initial_greedy_val": sft["greedy_val"],
            "methods": {m: {"best_val": r["best_val"], "best_step": r["best_step"], "test": r["test_at_best"],
                            "final_val": r["evals"][-1]["greedy"],
                            "median_step_s": float(np.median([s["wall_time_s"] for s in r["steps"]]))}
                        for m, r in results.items()}}
