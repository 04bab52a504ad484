"""`papers minedraft generate`: decode your own prompts with saved tiny-LM target and drafter folders (tasks.lm's
save_model layout) by AR, standard SD or PSD (drafter on its own core), printing tokens/s and latency.

Every input is checked before any work (InputError: one line, exit 2); torch and the models load after the checks.
"""
from __future__ import annotations

import json
from pathlib import Path

import typer

from tasks.core.console import console
from tasks.core.inputs import (InputError, check_choice, check_count, check_number, check_range, parse_json, read_json,
                               read_text)

from .paper import PAPER

app = typer.Typer(help=PAPER.command.summary,
                  no_args_is_help=True)
METHODS = ("ar", "sd", "psd")

@app.callback()
def main() -> None:
    """MineDraft commands (a group, so `generate` keeps its name)."""


MAX_PROMPTS, MAX_K, MAX_BATCH, MAX_NEW = 10_000, 32, 1024, 100_000


def read_prompts(path: Path, symbols: tuple[str, ...]) -> list[str]:
    """One prompt a line: a JSON string or {"text": "..."}; every character must be in the models' vocabulary."""
    lines = [(i, line) for i, line in enumerate(read_text(path, "PROMPTS").splitlines(), 1) if line.strip()]
    check_count(f"PROMPTS {path}: prompts", len(lines), MAX_PROMPTS)
    if not lines:
        raise InputError(f"PROMPTS {path}: no prompts (one JSON string or {{\"text\": ...}} a line)")
    known, prompts = set(symbols), []
    for number, line in lines:
        where = f"PROMPTS {path} line {number}"
        row = parse_json(line, where, expected='a string or {"text": "..."}')
        if isinstance(row, dict) and set(row) == {"text"}:
            row = row["text"]
        if not isinstance(row, str) or not row:
            raise InputError(f"{where}: expected a non-empty JSON string or {{\"text\": \"...\"}}, got {str(row)[:60]}")
        unknown = sorted(set(row) - known)
        if unknown:
            raise InputError(f"{where}: characters {unknown[:5]!r} are not in the models' vocabulary")
        prompts.append(row)
    return prompts


def read_model_meta(folder: Path, what: str) -> dict:
    """A folder written by tasks.lm.model.save_model: its tiny_lm.json (vocabulary and config)."""
    if not folder.is_dir():
        raise InputError(f"{what} {folder}: not a folder (expected a saved tiny-LM folder)")
    meta_path = folder / "tiny_lm.json"
    try:
        meta = read_json(meta_path, what, max_bytes=2**20)
        context = int(meta["config"]["context"])
        symbols = tuple(meta["symbols"])
    except InputError:
        raise InputError(f"{what} {folder}: no readable tiny_lm.json (not a tasks.lm save_model folder)") from None
    except (KeyError, TypeError, ValueError):
        raise InputError(f"{what} {meta_path}: not a tasks.lm model description") from None
    if not (folder / "model.safetensors").is_file():
        raise InputError(f"{what} {folder}: no model.safetensors")
    return {"context": context, "symbols": symbols}


@app.command()
def generate(
    target: Path = typer.Option(..., "--target", help="The target model folder (tasks.lm save_model)."),
    drafter: Path = typer.Option(None, "--drafter", help="The drafter model folder (needed by sd and psd)."),
    prompts_file: Path = typer.Option(..., "--prompts", help="JSONL: one prompt a line, a string or {\"text\": ...}."),
    k: int = typer.Option(4, "--k", help=f"Draft tokens per verification (1..{MAX_K})."),
    method: str = typer.Option("psd", "--method", help=f"One of {', '.join(METHODS)}."),
    max_new: int = typer.Option(32, "--max-new", help="New tokens per prompt."),
    batch: int = typer.Option(16, "--batch", help=f"Requests running at once (1..{MAX_BATCH}; psd: >= 2, two halves)."),
    temperature: float = typer.Option(1.0, "--temperature", help="Sampling temperature (0: greedy)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the per-request random streams (>= 0)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Decode PROMPTS with TARGET (and DRAFTER) by METHOD; print the completions, tokens/s and latency."""
    check_choice("--method", method, METHODS)
    check_range("--k", k, low=1, high=MAX_K)
    check_range("--batch", batch, low=2 if method == "psd" else 1, high=MAX_BATCH)
    check_range("--max-new", max_new, low=1, high=MAX_NEW)
    check_number("--temperature", temperature, at_least=0)
    check_range("--seed", seed, low=0)
    meta = read_model_meta(target, "--target")
    if method != "ar":
        if drafter is None:
            raise InputError(f"--drafter: needed by --method {method}")
        drafter_meta = read_model_meta(drafter, "--drafter")
        if drafter_meta["symbols"] != meta["symbols"]:
            raise InputError(f"--drafter {drafter}: its vocabulary differs from the target's")
        meta["context"] = min(meta["context"], drafter_meta["context"])
    prompts = read_prompts(prompts_file, meta["symbols"])
    drafts = 0 if method == "ar" else k
    longest = max(len(p) for p in prompts)
    if longest + max_new + drafts > meta["context"]:
        raise InputError(f"--max-new: the longest prompt ({longest}) + max-new ({max_new}) + k ({drafts}) exceeds the "
                         f"models' context of {meta['context']} positions")
    from .decode import decode_prompts  # torch, transformers: after the checks

    result = decode_prompts(target, drafter, prompts, method=method, k=k, max_new=max_new, batch=batch,
                            temperature=temperature, seed=seed)
    if as_json:
        print(json.dumps(result))
        return
    out = console()
    for prompt, text in zip(prompts, result["completions"]):
        out.print(f"{prompt!r} -> {text!r}", markup=False)
    vsr = "" if result["vsr"] is None else f", VSR {result['vsr']:.1f}%"
    out.print(f"{method}: {result['throughput']:.1f} tokens/s, latency {result['latency_s'] * 1e3:.1f} ms/request "
              f"({result['tokens']} tokens, {result['wall_s']:.3f} s{vsr}; load average {result['load_average']:.2f})")
