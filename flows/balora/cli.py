"""`papers balora finetune`: LoRA or BaLoRA fine-tuning of a user's saved tiny LM (tasks.lm.save_model folder) on
the user's text, the adapter written with peft's `save_pretrained`.

Every input is checked before any work (InputError: one line, exit 2). torch, transformers and peft are imported
after the checks, so `--help` and bad input answer at once.
"""
from __future__ import annotations

import json
from pathlib import Path

import typer

from tasks.core.console import console
from tasks.core.inputs import (InputError, check_choice, check_count, check_not_link, check_number, check_range, parse_json,
                               read_json, read_text)

from .paper import PAPER

app = typer.Typer(help=PAPER.command.summary,
                  no_args_is_help=True)
METHODS = ("balora", "lora")
MAX_STEPS, MAX_BATCH, MAX_RANK = 100_000, 4096, 1024
MAX_PARAMETERS = 200_000_000  # a tiny-LM command: refuse bigger checkpoints before loading them
VAL_FRACTION = 0.1  # the tail of the text is the held-out eval set


@app.callback()
def main() -> None:
    """BaLoRA: balance every LoRA pair after each optimizer step (same product, A^T A = B B^T)."""


def read_model_meta(folder: Path) -> dict:
    if not folder.exists():
        raise InputError(f"--model {folder}: no such folder")
    if not folder.is_dir():
        raise InputError(f"--model {folder}: not a folder (expected a tiny LM saved by tasks.lm.save_model)")
    meta_path = folder / "tiny_lm.json"
    if not meta_path.is_file():
        raise InputError(f"--model {folder}: no tiny_lm.json (expected a tiny LM saved by tasks.lm.save_model)")
    try:
        meta = read_json(meta_path, "--model", 16 * 2**20)
        config, symbols = meta["config"], meta["symbols"]
        d_model, context = int(config["d_model"]), int(config["context"])
    except (KeyError, TypeError, ValueError):  # an InputError of read_json too
        raise InputError(f"--model {meta_path}: not a tiny_lm.json (needs 'symbols' and 'config' with d_model, "
                         f"context)") from None
    if not (folder / "model.safetensors").is_file():
        raise InputError(f"--model {folder}: no model.safetensors")
    if not isinstance(symbols, list) or not all(isinstance(s, str) for s in symbols):
        raise InputError(f"--model {meta_path}: 'symbols' must be a list of strings")
    return {"d_model": d_model, "context": context, "symbols": symbols}


def read_texts(path: Path) -> str:
    """A .jsonl file of {"text": "..."} objects (one per line), or any other file as plain text."""
    text = read_text(path, "--data")
    if path.suffix != ".jsonl":
        return text
    parts = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        row = parse_json(line, f"--data {path} line {number}", expected='{"text": "..."}')
        if not isinstance(row, dict) or not isinstance(row.get("text"), str):
            raise InputError(f"--data {path} line {number}: expected an object with a string 'text', got {line[:60]!r}")
        parts.append(row["text"])
    return "\n\n".join(parts)


def encode_text(text: str, symbols: list[str], path: Path) -> list[int]:
    """Character ids of the model's vocabulary; a character outside it becomes '?' when '?' is a symbol."""
    index = {s: i for i, s in enumerate(symbols)}
    unknown = index.get("?")
    ids = []
    for ch in text:
        i = index.get(ch, unknown)
        if i is None:
            raise InputError(f"--data {path}: character {ch!r} is not in the model's vocabulary (and '?' is not either)")
        ids.append(i)
    return ids


def check_out(path: Path) -> Path:
    check_not_link(path, "--out")
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise InputError(f"--out {path}: exists and is not an empty folder (choose a new path)")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise InputError(f"--out {path}: the folder {parent} does not exist (create it first)")
    return path


@app.command()
def finetune(
    model: Path = typer.Option(..., "--model", help="A tiny LM folder saved by tasks.lm.save_model (save_pretrained "
                                                   "+ tiny_lm.json), e.g. data/balora/train/base."),
    data: Path = typer.Option(..., "--data", help="Your text: a .jsonl file of {\"text\": \"...\"} lines, or plain text. "
                                                 "The last 10% is held out for the eval loss."),
    rank: int = typer.Option(..., "--rank", help="LoRA rank r (1..d_model)."),
    method: str = typer.Option("balora", help="balora (LoRA balanced after every step) or lora (peft's LoRA)."),
    out: Path = typer.Option(Path("balora_adapter"), help="New folder for the adapter (peft save_pretrained)."),
    steps: int = typer.Option(200, help=f"Optimizer steps (1..{MAX_STEPS:,})."),
    lr: float = typer.Option(3e-3, help="AdamW learning rate (constant; weight decay 0.01)."),
    scale: float = typer.Option(1.0, help="LoRA scale: lora_alpha / r = scale^2."),
    batch: int = typer.Option(8, help=f"Windows per step (1..{MAX_BATCH})."),
    seed: int = typer.Option(0, help="Seed of the LoRA init and the batches (>= 0)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Fine-tune a LoRA (BaLoRA or plain) on the MLP linears of MODEL with DATA; write the adapter to OUT."""
    check_choice("--method", method, METHODS)
    check_range("--steps", steps, low=1, high=MAX_STEPS)
    check_range("--batch", batch, low=1, high=MAX_BATCH)
    check_range("--seed", seed, low=0)
    check_number("--lr", lr, above=0)
    check_number("--scale", scale, above=0)
    meta = read_model_meta(model)
    check_count("--model: d_model^2 (parameter scale)", meta["d_model"] ** 2, MAX_PARAMETERS)
    check_range("--rank", rank, low=1, high=min(meta["d_model"], MAX_RANK), note="the model's d_model")
    check_out(out)
    ids = encode_text(read_texts(data), meta["symbols"], data)
    n_val = max(meta["context"], round(VAL_FRACTION * len(ids)))
    if len(ids) - n_val < meta["context"]:
        raise InputError(f"--data {data}: {len(ids):,} characters is too short: needs at least "
                         f"{2 * meta['context']:,} (a training and an eval window of the model's context)")
    from .user_run import run_user_finetune  # torch, transformers, peft: after the checks

    try:
        result = run_user_finetune(model, ids[:-n_val], ids[-n_val:], method, rank, lr, scale, steps, batch, seed, out)
    except (OSError, ValueError, RuntimeError) as error:
        raise InputError(f"--model {model}: could not be loaded or trained ({str(error).splitlines()[0][:120]})") from None
    if as_json:
        print(json.dumps(result))
        return
    console().print(f"{method} r {rank}: eval loss {result['initial_eval']:.4f} -> {result['final_eval']:.4f} "
                    f"in {steps} steps ({result['median_step_s'] * 1e3:.1f} ms/step); adapter in {out}")
