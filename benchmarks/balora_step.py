"""BaLoRA vs LoRA: the cost of one fine-tuning step (the spec's C4) at three ranks.

The default profile's tiny GPT-2 (d 64, 2 layers, context 64, batch 8), LoRA on both MLP linears of every block
(peft). Per rank r in {4, 8, 16}: both methods step from copies of one model on the same batches, alternating
step by step so they meet the same machine load; median wall time per step and of the projection alone. Memory:
the trainable parameters and AdamW state (equal for both), and the projection's extra working memory, counted
from the shapes of its intermediates (about 4 (a + b) r + 8 r^2 floats per pair, freed after each pair); on a
GPU also the measured peak allocated memory (both methods' models together; per-method peaks are not separated).
"""
from __future__ import annotations

import torch

from flows.balora.timing import alternating_step_times
from tasks.core.device import single_torch_thread
from tasks.lm.corpus import CHAR_VOCAB
from tasks.lm.model import TinyLMConfig, build_model
from tasks.lowrank.peft_lora import lora_factor_pairs

from .common import write_result

RANKS, STEPS, BATCH = (4, 8, 16), 30, 8
CONFIG = TinyLMConfig(d_model=64, n_layers=2, n_heads=4, context=64)


def projection_extra_bytes(model) -> int:
    """The largest working memory of one pair's projection (float32 intermediates)."""
    sizes = [4 * (left.shape[0] + right.shape[1]) * left.shape[1] + 8 * left.shape[1] ** 2
             for _, _, left, right in lora_factor_pairs(model)]
    return 4 * max(sizes)


def rank_costs(base, rank: int, device: str) -> dict:
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    ids = torch.randint(0, 97, (20_000,), generator=torch.Generator().manual_seed(0))
    timing = alternating_step_times(base, ids, rank, STEPS, BATCH, CONFIG.context, seed=0, device=device)
    model = timing["models"]["balora"]
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return {"rank": rank, "median_step_s": timing["median_step_s"], "step_ratio_balora_over_lora": timing["ratio"],
            "median_projection_s": timing["median_projection_s"],
            "projection_share_of_step": timing["median_projection_s"] / timing["median_step_s"]["balora"],
            "trainable_parameters": trainable, "adamw_state_bytes": 2 * 4 * trainable,
            "projection_extra_bytes": projection_extra_bytes(model),
            "peak_allocated_bytes_both_methods": torch.cuda.max_memory_allocated() if device == "cuda" else None}


def main() -> dict:
    single_torch_thread()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    base = build_model(CONFIG, CHAR_VOCAB, seed=0)
    rows = [rank_costs(base, r, device) for r in RANKS]
    result = {"device": device, "model": {"d_model": CONFIG.d_model, "n_layers": CONFIG.n_layers,
                                          "context": CONFIG.context, "batch": BATCH},
              "ranks": rows, "step_ratio_by_rank": {r["rank"]: r["step_ratio_balora_over_lora"] for r in rows},
              "projection_s_by_rank": {r["rank"]: r["median_projection_s"] for r in rows}}
    write_result("balora_step", result)
    return result


if __name__ == "__main__":
    import json

    print(json.dumps(main(), indent=1))
