"""Batch-parallel speculative decoding (PSD, MineDraft's scheduler, spec §3.2) over two worker processes.

The running batch is split into two halves of at most B/2 requests. While the target worker verifies one half (and
runs the rejection sampler on it), the drafter worker drafts the other; a half is drafted only after its previous
verification was applied, so drafts always see up-to-date contexts. Finished requests are retired and the freed
slots refilled from the queue right after their half's verification, which keeps the halves balanced. When only
one half has requests it is drafted and verified in turn (plain SD).
"""
from __future__ import annotations

import time
from collections import deque

from tasks.lm.speculative import DecodeStats, make_requests, refill, stats


def decode_psd(drafter, target, prompts: list[list[int]], *, max_new: int, k: int, temperature: float, batch: int,
               seed: int, events: list | None = None) -> DecodeStats:
    """PSD with `drafter`/`target` Worker handles. `events` (optional) receives ("draft"|"verify"|"applied", half,
    half sizes) in order, for the schedule tests."""
    if batch < 2:
        raise ValueError(f"batch: PSD splits the batch in two halves, needs >= 2, got {batch}")
    requests = make_requests(prompts, max_new, seed)
    for worker in (drafter, target):
        worker.call("reset", seed=seed)
    capacity = (batch // 2, batch - batch // 2)
    queue, halves, pending = deque(requests), ([], []), {}
    log = events if events is not None else []
    steps, start = 0, time.perf_counter()

    def send_draft(h: int) -> None:
        log.append(("draft", h, len(halves[0]), len(halves[1]), len(queue)))
        drafter.send("draft", contexts=[r.context for r in halves[h]], rids=[r.rid for r in halves[h]], k=k,
                     temperature=temperature)

    refill(halves[0], queue, capacity[0])
    refill(halves[1], queue, capacity[1])
    turn = 0
    while halves[0] or halves[1]:
        cur, other = (turn, 1 - turn) if halves[turn] else (1 - turn, turn)
        if cur not in pending:  # prologue, or the other half ran dry: nothing to overlap this draft with
            send_draft(cur)
            pending[cur] = drafter.receive()
        drafts, q = pending.pop(cur)
        log.append(("verify", cur, len(halves[0]), len(halves[1]), len(queue)))
        target.send("verify", contexts=[r.context for r in halves[cur]], rids=[r.rid for r in halves[cur]],
                    drafts=drafts, q=q, temperature=temperature)
        overlap = bool(halves[other]) and other not in pending
        if overlap:
            send_draft(other)
        results = target.receive()
        if overlap:
            pending[other] = drafter.receive()
        for request, d, (emitted, accepted) in zip(halves[cur], drafts, results):
            request.apply(emitted, accepted, len(d))
            if request.done:
                request.finished_s = time.perf_counter() - start
        halves[cur][:] = [r for r in halves[cur] if not r.done]
        refill(halves[cur], queue, capacity[cur])
        log.append(("applied", cur, len(halves[0]), len(halves[1]), len(queue)))
        steps += 1
        turn = other
    wall = time.perf_counter() - start
    return stats(requests, wall, drafter.call("busy"), target.call("busy"), steps)
