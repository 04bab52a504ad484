"""MineDraft: throughput and latency of AR-1c, SD-1c, PSD-2c and SD-2c per draft length k at three batch sizes, in one
run, with transformers' assisted generation (the field's SD) beside ours at batch 1.

Models: the default run's trained target and drafter (data/minedraft/train) when present, else tiny ones trained
here for 60 steps. Every configuration decodes the same prompts with the same seeds in the same pinned worker
processes as the pipeline's solve stage (no KV cache for any of ours; transformers' assisted generation keeps its KV
cache, it cannot run without one, so its row is a reference point, not an equal-policy comparison). The 1-minute load
average is recorded beside every timing: on the shared 2-core machine the numbers are noisy.
"""
from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from flows.minedraft.experiments import CONFIGS, Workers, run_config, warm_up
from flows.minedraft.prompts import line_windows
from tasks.lm.corpus import CHAR_VOCAB, stdlib_corpus
from tasks.lm.model import TinyLMConfig, build_model, load_model, save_model
from tasks.lm.pretrain import pretrain
from tasks.lm.training import TrainSetting
from tasks.lm.speculative import decode

from .common import ROOT, write_result

BATCHES, KS = (4, 8, 16), (1, 2, 4)
PROMPTS, PROMPT_LEN, MAX_NEW, HF_PROMPTS = 16, 64, 16, 4


def models(folder: Path) -> tuple[Path, Path, str]:
    trained = ROOT / "data" / "minedraft" / "train"
    if (trained / "target" / "model.safetensors").exists():
        return trained / "target", trained / "drafter", "default run"
    corpus = stdlib_corpus(300_000)
    for name, config, seed in (("target", TinyLMConfig(d_model=128, n_layers=4, n_heads=4, context=128), 1),
                              ("drafter", TinyLMConfig(d_model=64, n_layers=1, n_heads=2, context=128), 2)):
        model = build_model(config, CHAR_VOCAB, seed)
        pretrain(model, corpus.train, TrainSetting(60, 16, cosine=True), 128, seed)
        save_model(model, folder / name, CHAR_VOCAB, config)
    return folder / "target", folder / "drafter", "trained here, 60 steps"


def assisted_generation(target_dir: Path, drafter_dir: Path, prompts: list[list[int]], k: int) -> dict:
    """transformers' assisted generation (greedy, batch 1, its KV cache) vs our greedy SD-1c at batch 1, in this
    process on one thread: seconds and whether the tokens agree."""
    torch.set_num_threads(1)
    target, drafter = load_model(target_dir)[0], load_model(drafter_dir)[0]
    started, theirs = time.perf_counter(), []
    for prompt in prompts:
        ids = torch.tensor([prompt])
        out = target.generate(ids, attention_mask=torch.ones_like(ids), assistant_model=drafter, do_sample=False,
                              max_new_tokens=MAX_NEW, min_new_tokens=MAX_NEW, num_assistant_tokens=k,
                              num_assistant_tokens_schedule="constant", pad_token_id=CHAR_VOCAB.pad)
        theirs.append(out[0, len(prompt):].tolist())
    hf_s = time.perf_counter() - started
    ours = decode(target, drafter, prompts, max_new=MAX_NEW, k=k, temperature=0, batch=1, seed=0)
    tokens = len(prompts) * MAX_NEW
    return {"k": k, "hf_assisted_tokens_per_s": tokens / hf_s, "ours_sd_batch1_tokens_per_s": tokens / ours.wall_s,
            "ours_over_hf": hf_s / ours.wall_s, "same_tokens": ours.outputs == theirs, "load_average": os.getloadavg()[0]}


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        target, drafter, source = models(Path(tmp))
        corpus = stdlib_corpus(300_000)
        prompts = line_windows(corpus.val, PROMPTS, PROMPT_LEN)
        rows = []
        workers = Workers.start(str(target), str(drafter))
        try:
            warm_up(workers, prompts, KS[0], 1.0)
            for batch in BATCHES:
                for config in CONFIGS:
                    for k in ((KS[0],) if config == "AR-1c" else KS):
                        run = run_config(workers, config, prompts, max_new=MAX_NEW, k=k, temperature=1.0, batch=batch,
                                         seed=0)
                        rows.append({key: run[key] for key in ("config", "k", "throughput", "latency_s", "wall_s",
                                                                "load_before", "load_after", "accepted", "drafted")}
                                    | {"batch": batch})
        finally:
            workers.close()
        hf = [assisted_generation(target, drafter, prompts[:HF_PROMPTS], k) for k in (2, 4)]

    def thr(config, batch, k):
        return next(r["throughput"] for r in rows if (r["config"], r["batch"], r["k"]) == (config, batch, k))

    ratios = {f"B{b}.k{k}": {"psd_2c_over_sd_1c": thr("PSD-2c", b, k) / thr("SD-1c", b, k),
                             "psd_2c_over_sd_2c": thr("PSD-2c", b, k) / thr("SD-2c", b, k),
                             "sd_1c_over_ar_1c": thr("SD-1c", b, k) / thr("AR-1c", b, 0)}
              for b in BATCHES for k in KS}
    path = write_result("minedraft_decode", {"models": source, "prompts": PROMPTS, "max_new": MAX_NEW,
                                             "batches": list(BATCHES), "ks": list(KS), "runs": rows,
                                             "ratios": ratios, "transformers_assisted": hf,
                                             "load_average_mean": float(np.mean([r["load_before"] for r in rows]))})
    print(json.dumps({"ratios": ratios, "transformers_assisted": hf}, indent=1))
    print(path)


if __name__ == "__main__":
    main()
