"""PSD over two pinned worker processes (spec minedraft §10 tests 4-7): same outputs as AR / SD, the schedule
invariant, balanced halves, determinism; the calibrations around a run; the sampler check of C1."""
from __future__ import annotations

import pytest
import torch

from flows.minedraft.claims import sampler_check
from flows.minedraft.experiments import Workers, run_bracketed
from flows.minedraft.psd import decode_psd
from flows.minedraft.worker import Worker
from tasks.lm.corpus import CHAR_VOCAB
from tasks.lm.model import TinyLMConfig, build_model, save_model
from tasks.lm.speculative import decode, request_rng


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    torch.set_num_threads(1)
    folder = tmp_path_factory.mktemp("minedraft_models")
    models = {}
    for name, config, seed in (("target", TinyLMConfig(d_model=64, n_layers=2, n_heads=4, context=64), 21),
                              ("drafter", TinyLMConfig(d_model=32, n_layers=1, n_heads=2, context=64), 22)):
        model = build_model(config, CHAR_VOCAB, seed)
        with torch.no_grad():
            model.lm_head.weight.mul_(10.0)  # sharper than init: greedy without near-ties, sampling still random
        save_model(model, folder / name, CHAR_VOCAB, config)
        models[name] = model
    prompts = [request_rng(1, i, 9).integers(0, 97, size=8 + 5 * (i % 4)).tolist() for i in range(9)]  # unequal
    drafter, target = Worker([1], 1, drafter=str(folder / "drafter")), Worker([0], 1, target=str(folder / "target"))
    yield models, prompts, drafter, target
    drafter.close()
    target.close()


@pytest.mark.slow  # six PSD runs and three in-process decodes
def test_psd_greedy_and_sampled_equal_in_process_decoding(setup):
    models, prompts, drafter, target = setup
    kwargs = dict(max_new=9, batch=4, seed=3)
    ar = decode(models["target"], None, prompts, k=0, temperature=0, **kwargs)
    assert decode_psd(drafter, target, prompts, k=3, temperature=0, **kwargs).outputs == ar.outputs
    # k = 0: AR decoding in two alternating halves (test 4)
    ar_sampled = decode(models["target"], None, prompts, k=0, temperature=1.0, **kwargs)
    assert decode_psd(drafter, target, prompts, k=0, temperature=1.0, **kwargs).outputs == ar_sampled.outputs
    # the per-request streams: PSD and SD draw the same numbers per request (test 7: and repeat exactly)
    sd = decode(models["target"], models["drafter"], prompts, k=2, temperature=1.0, **kwargs)
    psd = [decode_psd(drafter, target, prompts, k=2, temperature=1.0, **kwargs) for _ in range(2)]
    assert psd[0].outputs == psd[1].outputs == sd.outputs
    assert psd[0].accepted == sd.accepted and psd[0].drafted == sd.drafted
    assert all(len(o) == 9 for o in psd[0].outputs)


@pytest.mark.heavy  # starts the two pinned worker processes: ~10 s (tests/papers/minedraft/test_worker.py stays)
def test_schedule_invariant_and_balanced_halves(setup):
    _, prompts, drafter, target = setup
    events = []
    decode_psd(drafter, target, prompts, max_new=7, k=2, temperature=1.0, batch=4, seed=0, events=events)
    waiting = {0: False, 1: False}
    overlapped = 0
    for i, (kind, half, h0, h1, queued) in enumerate(events):
        if kind == "verify":
            waiting[half] = True
        elif kind == "applied":
            waiting[half] = False
        else:  # a half is drafted only after its previous verification was applied (test 5)
            assert not waiting[half], events[:i + 1]
            overlapped += waiting[1 - half]
        if queued and kind != "applied":  # test 6, while the queue is non-empty
            assert abs(h0 - h1) <= 1, events[i]
    assert overlapped > 0  # drafts did run while the other half was being verified


@pytest.mark.heavy  # the two workers: PSD runs bracketed by calibrations in them
def test_a_psd_run_is_bracketed_by_calibrations_in_its_own_workers(setup):
    _, prompts, drafter, target = setup
    workers = Workers(main=target, drafter=drafter)
    kwargs = dict(max_new=6, k=2, temperature=1.0, batch=4, seed=5)
    plain = decode_psd(drafter, target, prompts, **kwargs)
    contexts = [p * 3 for p in prompts[:4]]
    bracketed = run_bracketed(workers, "PSD-2c", prompts, contexts, calibrate_repeats=2, **kwargs)
    assert bracketed["outputs"] == plain.outputs  # the calibrations use their own PRNG streams
    for side in ("before", "after"):
        costs = bracketed["calibration"][side]
        assert set(costs) == {"draft_s", "verify_s", "round_trip_s"} and all(v > 0 for v in costs.values())
    assert "calibration" not in run_bracketed(workers, "AR-1c", prompts, contexts, calibrate_repeats=2, **kwargs)


def test_sampler_check_is_exact_and_deterministic():
    first = sampler_check(100_000, 4)
    assert first == sampler_check(100_000, 4)
    assert first["tv"] < 0.01 and first["acceptance"] == pytest.approx(first["alpha"], abs=0.01)
