"""`papers lambda-grpo weights | train`: the process sets and lambda-GRPO token weights of a user's group of
completions, and a GRPO / lambda-GRPO run on chain arithmetic outside DVC.

Every input is checked before any work (InputError: one line, exit 2). torch and the models are imported
inside `train`, so `weights` and `--help` start at once.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import typer

from tasks.core.console import console
from tasks.core.inputs import InputError, check_choice, check_count, check_number, check_range, parse_json, read_text

from .paper import PAPER

app = typer.Typer(help=PAPER.command.summary, no_args_is_help=True)
MAX_GROUP = 4096  # completions in one group
MAX_TOKENS = 65_536  # tokens of one completion
MAX_SFT_STEPS, MAX_RL_STEPS = 100_000, 100_000
MAX_LR = 1.0  # Adam on a tiny policy: anything above diverges at once
TASKS = ("chain-arith",)
METHOD_CHOICES = ("both", "grpo", "lambda_grpo")


def parse_completion(line: str, number: int, path: Path) -> tuple[list, float | None]:
    """One line: a JSON list of token ids, or {"tokens": [...]} / {"text": "..."} with an optional "reward"."""
    where = f"GROUP {path} line {number}"
    row = parse_json(line, where, expected="a list of token ids or an object")
    reward = None
    if isinstance(row, dict):
        unknown = set(row) - {"tokens", "text", "reward"}
        if unknown or ("tokens" in row) == ("text" in row):
            raise InputError(f"{where}: an object needs exactly one of 'tokens' or 'text' (and optionally 'reward'), "
                             f"got keys {sorted(row)}")
        reward = row.get("reward")
        if reward is not None and (isinstance(reward, bool) or not isinstance(reward, (int, float))
                                   or not math.isfinite(reward)):
            raise InputError(f"{where}: reward must be a finite number, got {reward!r}")
        row = row["tokens"] if "tokens" in row else row["text"]
        if isinstance(row, str):
            check_count(f"{where}: text length", len(row), MAX_TOKENS, " characters")
            return list(row), reward  # text: one token per character
    if not isinstance(row, list) or not all(isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in row):
        raise InputError(f"{where}: tokens must be a list of non-negative integer ids, got {str(row)[:60]}")
    check_count(f"{where}: completion length", len(row), MAX_TOKENS, " tokens")
    return row, reward


def read_group(path: Path) -> tuple[list[list], list[float] | None]:
    lines = [(i, line) for i, line in enumerate(read_text(path, "GROUP").splitlines(), 1) if line.strip()]
    check_count(f"GROUP {path}: completions", len(lines), MAX_GROUP)
    if len(lines) < 2:
        raise InputError(f"GROUP {path}: a group needs at least 2 completions, got {len(lines)}")
    rows = [parse_completion(line, i, path) for i, line in lines]
    rewards = [r for _, r in rows]
    if any(r is None for r in rewards) and any(r is not None for r in rewards):
        raise InputError(f"GROUP {path}: give a reward on every line or on none")
    return [c for c, _ in rows], None if rewards[0] is None else [float(r) for r in rewards]


def group_report(completions: list[list], rewards: list[float] | None) -> dict:
    from .process_sets import process_counts, process_steps  # torch: only when a command runs, not for --help

    counts = process_counts(completions)
    report = {"group_size": len(completions), "lambda": counts,
              "weights": [[1.0 / c for c in row] for row in counts],
              "process_steps": [{"members": list(s.members), "start": s.start, "end": s.end}
                                for s in process_steps(completions)]}
    if rewards is not None:
        G = len(rewards)
        mean = sum(rewards) / G
        std = math.sqrt(sum((r - mean) ** 2 for r in rewards) / (G - 1))
        advantages = [(r - mean) / (std + 1e-4) for r in rewards]
        report["advantages"] = advantages
        for step in report["process_steps"]:
            step["mc_value"] = sum(rewards[j] for j in step["members"]) / len(step["members"])
            step["mc_advantage"] = sum(advantages[j] for j in step["members"]) / len(step["members"])
    return report


@app.command()
def weights(
    group_file: Path = typer.Argument(..., help="A group's completions, one per line: a JSON list of token ids, or "
                                           "{\"tokens\": [...]} or {\"text\": \"...\"} (one token per character), "
                                           "each with an optional \"reward\"."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """The process sets |lambda(i, t)| of GROUP_FILE's completions and lambda-GRPO's weights 1/|lambda|."""
    completions, rewards = read_group(group_file)
    report = group_report(completions, rewards)
    if as_json:
        print(json.dumps(report))
        return
    out = console()
    for i, (row, w) in enumerate(zip(report["lambda"], report["weights"])):
        out.print(f"completion {i}: |lambda| {row}  weights {[round(x, 4) for x in w]}")
    shared = [s for s in report["process_steps"] if 1 < len(s["members"]) < len(completions)]
    out.print(f"{len(report['process_steps'])} process steps, {len(shared)} shared by some but not all members")


@app.command()
def train(
    task_name: str = typer.Option("chain-arith", "--task", help=f"The task: {', '.join(TASKS)}."),
    method: str = typer.Option("both", help=f"One of {', '.join(METHOD_CHOICES)} (both: from the same SFT policy)."),
    profile: str = typer.Option("smoke", help="Sizes from stages/lambda_grpo/params.yaml: smoke, default or full."),
    sft_steps: int = typer.Option(None, help=f"SFT steps (1..{MAX_SFT_STEPS:,}; default: the profile's)."),
    rl_steps: int = typer.Option(None, help=f"RL steps (1..{MAX_RL_STEPS:,}; default: the profile's)."),
    lr: float = typer.Option(None, "--lr", help=f"RL learning rate of both methods, in (0, {MAX_LR:g}] (default: the "
                                                "first of the profile's lr_grid; no sweep outside DVC)."),
    seed: int = typer.Option(0, help="Seed of data, SFT and RL (>= 0)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """SFT a tiny GPT-2 on noisy chain arithmetic, then RL it with GRPO and/or lambda-GRPO; print the accuracies."""
    check_choice("--task", task_name, TASKS)
    check_choice("--method", method, METHOD_CHOICES)
    if sft_steps is not None:
        check_range("--sft-steps", sft_steps, low=1, high=MAX_SFT_STEPS)
    if rl_steps is not None:
        check_range("--rl-steps", rl_steps, low=1, high=MAX_RL_STEPS)
    if lr is not None:
        check_number("--lr", lr, above=0, at_most=MAX_LR)
    check_range("--seed", seed, low=0)
    from .experiments import train_outside_dvc  # torch, transformers: after the checks

    result = train_outside_dvc(profile, method, sft_steps, rl_steps, seed, lr)
    if as_json:
        print(json.dumps(result))
        return
    out = console()
    out.print(f"SFT policy ({result['parameters']:,} parameters): greedy val accuracy {result['initial_greedy_val']:.3f}; "
              f"RL lr {result['lr']:g}")
    for name, row in result["methods"].items():
        out.print(f"{name}: best greedy val {row['best_val']:.3f} at step {row['best_step']}, test {row['test']:.3f}, "
                  f"median step {row['median_step_s'] * 1e3:.1f} ms")
