"""The GPU variants (spec §6.3, full profile): PSD with the target on the GPU and the drafter on a CPU core, PSD on two
CUDA streams of one GPU, and SD with both models on the GPU emit the same greedy tokens as SD on the CPU, and their
workers report busy time. Skipped where there is no CUDA device."""
from __future__ import annotations

import pytest
import torch

from flows.minedraft.experiments import CORE_DRAFTER, CORE_TARGET, Workers, run_config
from flows.minedraft.gpu import GpuWorkers
from flows.minedraft.worker import Worker
from tasks.lm.corpus import CHAR_VOCAB
from tasks.lm.model import TinyLMConfig, build_model, save_model
from tasks.lm.speculative import decode, request_rng

pytestmark = [pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device"), pytest.mark.heavy]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("minedraft_gpu")
    found = {}
    for name, config, seed in (("target", TinyLMConfig(d_model=64, n_layers=2, n_heads=4, context=64), 21),
                              ("drafter", TinyLMConfig(d_model=32, n_layers=1, n_heads=2, context=64), 22)):
        model = build_model(config, CHAR_VOCAB, seed)
        with torch.no_grad():
            model.lm_head.weight.mul_(10.0)  # sharp: greedy without near-ties between CPU and GPU arithmetic
        save_model(model, folder / name, CHAR_VOCAB, config)
        found[name] = model
    return folder, found


def test_gpu_variants_match_cpu_greedy_sd(models):
    folder, cpu = models
    prompts = [request_rng(2, i, 9).integers(0, 97, size=8 + 3 * (i % 3)).tolist() for i in range(6)]
    kwargs = dict(max_new=8, k=2, temperature=0.0, batch=4, seed=1)
    reference = decode(cpu["target"], cpu["drafter"], prompts, **kwargs).outputs
    target, drafter = str(folder / "target"), str(folder / "drafter")
    workers = Workers(Worker([CORE_TARGET], 1, target, drafter), Worker([CORE_DRAFTER], 1, drafter=drafter),
                      GpuWorkers.start(CORE_TARGET, target, drafter))
    try:
        assert workers.gpu.main.ready()["device"] == "cuda"
        for config in ("SD-gpu", "PSD-gpu+cpu", "PSD-2stream"):
            run = run_config(workers, config, prompts, **kwargs)
            assert run["outputs"] == reference, config
            assert run["busy_draft_s"] > 0 and run["busy_verify_s"] > 0 and run["wall_s"] > 0
        sampled = [run_config(workers, config, prompts, **(kwargs | {"temperature": 1.0}))
                   for config in ("PSD-2stream", "PSD-2stream")]
        assert sampled[0]["outputs"] == sampled[1]["outputs"]  # deterministic per-request streams on the GPU too
    finally:
        workers.close()
