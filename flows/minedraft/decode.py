"""The CLI's decode: one AR, SD or PSD run of a user's prompts in pinned worker processes (as the benchmark runs)."""
from __future__ import annotations

import os
from pathlib import Path

from tasks.lm.vocab import TokenVocab

from .experiments import Workers, run_config

CONFIG = {"ar": "AR-1c", "sd": "SD-1c", "psd": "PSD-2c"}


def decode_prompts(target: Path, drafter: Path | None, prompts: list[str], *, method: str, k: int, max_new: int,
                   batch: int, temperature: float, seed: int) -> dict:
    import json

    vocab = TokenVocab(tuple(json.loads((Path(target) / "tiny_lm.json").read_text())["symbols"]))
    ids = [vocab.encode(p) for p in prompts]
    workers = Workers.start(str(target), str(drafter) if drafter else None, with_drafter=method == "psd")
    try:
        run = run_config(workers, CONFIG[method], ids, max_new=max_new, k=k, temperature=temperature, batch=batch,
                         seed=seed)
    finally:
        workers.close()
    return {"method": method, "k": k if method != "ar" else 0,
            "completions": ["".join(vocab.decode(o)) for o in run["outputs"]],
            "tokens": run["tokens"], "wall_s": run["wall_s"], "throughput": run["throughput"],
            "latency_s": run["latency_s"], "vsr": 100 * run["accepted"] / run["drafted"] if run["drafted"] else None,
            "load_average": os.getloadavg()[0]}
