"""A run outside DVC (`papers lambda-grpo train`): a profile's sizes, with steps and seed of the user's choice."""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from tasks.core.inputs import InputError
from tasks.core.io import repo_root
from tasks.core.params import ParamsError, load_paper_params
from tasks.core.seeding import derive_seed

from .params import Params
from .recipes import rl_run, rl_settings, save_problems, sft_policy, sft_traces


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
