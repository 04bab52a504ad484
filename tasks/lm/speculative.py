"""Speculative decoding (Leviathan et al. 2023; Chen et al. 2023) for batches of requests, without a KV cache.

Every forward pass recomputes its whole context (right-padded batch: causal attention never lets the padding after a
row reach it), so costs stay compute-bound and identical for every method that uses these pieces.
- `draft_tokens`: k drafter tokens per request, sampled from q (or greedy), with q kept for the sampler.
- `verify_and_accept`: one target forward over context + drafts, then per request the lossless rejection sampler
  (`accept_sampled`) or the greedy rule (`accept_greedy`); k = 0 drafts is plain autoregressive decoding.
- `decode`: AR or standard SD over a queue of requests with at most `batch` running (finished ones are retired and
  replaced at once); `Request` carries its own PRNG streams (draft: 0, accept: 1), so every schedule that draws
  for a request in the same order draws the same numbers.
"""
from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field

import numpy as np
import torch

DRAFT_STREAM, ACCEPT_STREAM = 0, 1


def request_rng(seed: int, rid: int, stream: int) -> np.random.Generator:
    """The PRNG of one request's draft (0) or accept (1) stream."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, rid, stream])))


def expected_tokens(alpha: float, k: int) -> float:
    """E[tokens per verification] with i.i.d. per-token acceptance alpha: (1 - alpha^(k+1)) / (1 - alpha)."""
    return float(k + 1) if alpha >= 1 else (1 - alpha ** (k + 1)) / (1 - alpha)


def sample_index(probs: np.ndarray, rng: np.random.Generator) -> int:
    """One draw from an (unnormalised, non-negative) probability vector by its inverse CDF."""
    cdf = np.cumsum(probs)
    return int(min(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"), len(probs) - 1))


def accept_sampled(p: np.ndarray, q: np.ndarray, drafts, rng: np.random.Generator) -> tuple[list[int], int]:
    """The lossless rejection sampler of one request: p [k+1, V] target, q [k, V] drafter probabilities, drafts
    x_1..x_k drawn from q. Accept x_j while u <= p_j(x_j) / q_j(x_j); at the first rejection emit a draw from
    norm(max(0, p_j - q_j)) and stop; all accepted: a bonus draw from p_{k+1}. Returns (emitted, accepted)."""
    for j, x in enumerate(drafts):
        if rng.random() * q[j, x] <= p[j, x]:
            continue
        residual = np.maximum(p[j] - q[j], 0.0)
        return list(drafts[:j]) + [sample_index(residual if residual.sum() > 0 else p[j], rng)], j
    return list(drafts) + [sample_index(p[len(drafts)], rng)], len(drafts)


def accept_greedy(target_argmax, drafts) -> tuple[list[int], int]:
    """Greedy verification: accept x_j while it is the target's argmax; emit the target's argmax at the first
    mismatch (or the bonus argmax after k matches). Returns (emitted, accepted)."""
    for j, x in enumerate(drafts):
        if x != target_argmax[j]:
            return list(drafts[:j]) + [int(target_argmax[j])], j
    return list(drafts) + [int(target_argmax[len(drafts)])], len(drafts)


@torch.no_grad()
def last_logits(model, contexts: list[list[int]], width: int) -> torch.Tensor:
    """Logits [b, width, V] of each context's last `width` positions, one forward of the right-padded batch, on the
    CPU whatever device the model is on (a GPU model's forward has finished when this returns)."""
    lengths = torch.tensor([len(c) for c in contexts])
    ids = torch.zeros((len(contexts), int(lengths.max())), dtype=torch.long)
    for i, c in enumerate(contexts):
        ids[i, :len(c)] = torch.tensor(c)
    logits = model(input_ids=ids.to(model.device)).logits.cpu()
    positions = lengths[:, None] - width + torch.arange(width)
    return logits[torch.arange(len(contexts))[:, None], positions].float()


def probabilities(logits: torch.Tensor, temperature: float) -> np.ndarray:
    return torch.softmax(logits.double() / temperature, dim=-1).numpy()


def draft_tokens(drafter, contexts: list[list[int]], k: int, temperature: float,
                 rngs: list[np.random.Generator]) -> tuple[list[list[int]], np.ndarray | None]:
    """k draft tokens per context (k drafter forwards) and their q [b, k, V] (None when greedy: temperature 0)."""
    contexts = [list(c) for c in contexts]
    drafts, qs = [[] for _ in contexts], []
    for _ in range(k):
        logits = last_logits(drafter, contexts, 1)[:, 0]
        if temperature == 0:
            tokens = logits.argmax(-1).tolist()
        else:
            q = probabilities(logits, temperature)
            qs.append(q)
            tokens = [sample_index(q[i], rng) for i, rng in enumerate(rngs)]
        for i, t in enumerate(tokens):
            contexts[i].append(t)
            drafts[i].append(t)
    q = None if temperature == 0 or k == 0 else np.stack(qs, axis=1)
    return drafts, q


def verify_and_accept(target, contexts: list[list[int]], drafts: list[list[int]], q: np.ndarray | None,
                      temperature: float, rngs: list[np.random.Generator]) -> list[tuple[list[int], int]]:
    """One target forward over each context + its drafts, then the greedy rule or the rejection sampler per request:
    (emitted tokens, accepted drafts) per request."""
    k = len(drafts[0]) if drafts else 0
    logits = last_logits(target, [c + d for c, d in zip(contexts, drafts)], k + 1)
    if temperature == 0:
        return [accept_greedy(row.tolist(), d) for row, d in zip(logits.argmax(-1), drafts)]
    p = probabilities(logits, temperature)
    empty = np.zeros((0, p.shape[-1]))
    return [accept_sampled(p[i], empty if q is None else q[i], d, rng) for i, (d, rng) in enumerate(zip(drafts, rngs))]


@dataclass
class Request:
    """One prompt's decoding state: emitted tokens, counters and its two PRNG streams."""

    rid: int
    prompt: list[int]
    max_new: int
    seed: int
    tokens: list[int] = field(default_factory=list)
    drafted: int = 0
    accepted: int = 0
    verifications: int = 0
    finished_s: float | None = None

    @property
    def context(self) -> list[int]:
        return self.prompt + self.tokens

    @property
    def done(self) -> bool:
        return len(self.tokens) >= self.max_new

    def apply(self, emitted: list[int], accepted: int, drafted: int) -> None:
        self.tokens.extend(emitted[:self.max_new - len(self.tokens)])
        self.drafted, self.accepted, self.verifications = self.drafted + drafted, self.accepted + accepted, self.verifications + 1


def make_requests(prompts: list[list[int]], max_new: int, seed: int) -> list[Request]:
    return [Request(i, list(p), max_new, seed) for i, p in enumerate(prompts)]


def check_lengths(prompts: list[list[int]], max_new: int, k: int, context: int) -> None:
    """Every verification (context + k drafts) must fit the model's positions: no truncation, no sliding window."""
    longest = max(len(p) for p in prompts)
    if longest + max_new + k > context:
        raise ValueError(f"prompt length {longest} + max_new {max_new} + k {k} exceeds the model context {context}")


class Streams:
    """Each request's PRNG of one stream, created on first use (a worker sees only some requests)."""

    def __init__(self, seed: int, stream: int):
        self.seed, self.stream, self.rngs = seed, stream, {}

    def __call__(self, rids) -> list[np.random.Generator]:
        return [self.rngs.setdefault(r, request_rng(self.seed, r, self.stream)) for r in rids]


@dataclass
class DecodeStats:
    """What one decode run measured: outputs in prompt order, wall and busy seconds, draft counters."""

    outputs: list[list[int]]
    wall_s: float
    busy_draft_s: float
    busy_verify_s: float
    drafted: int
    accepted: int
    verifications: int
    finish_s: list[float]
    steps: int

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def refill(running: list[Request], queue: deque, capacity: int) -> None:
    while queue and len(running) < capacity:
        running.append(queue.popleft())


def decode(target, drafter, prompts: list[list[int]], *, max_new: int, k: int, temperature: float, batch: int,
           seed: int) -> DecodeStats:
    """AR (drafter None or k = 0) or standard SD (draft k, then verify) over the prompts, at most `batch` running."""
    requests = make_requests(prompts, max_new, seed)
    draft_rngs, accept_rngs = Streams(seed, DRAFT_STREAM), Streams(seed, ACCEPT_STREAM)
    queue, running = deque(requests), []
    busy = {"draft": 0.0, "verify": 0.0}
    steps, start = 0, time.perf_counter()
    while queue or running:
        refill(running, queue, batch)
        contexts, rids = [r.context for r in running], [r.rid for r in running]
        t0 = time.perf_counter()
        if drafter is None or k == 0:
            drafts, q = [[] for _ in running], None
        else:
            drafts, q = draft_tokens(drafter, contexts, k, temperature, draft_rngs(rids))
        t1 = time.perf_counter()
        results = verify_and_accept(target, contexts, drafts, q, temperature, accept_rngs(rids))
        busy["draft"] += t1 - t0
        busy["verify"] += time.perf_counter() - t1
        for request, d, (emitted, accepted) in zip(running, drafts, results):
            request.apply(emitted, accepted, len(d))
            if request.done:
                request.finished_s = time.perf_counter() - start
        running = [r for r in running if not r.done]
        steps += 1
    return stats(requests, time.perf_counter() - start, busy["draft"], busy["verify"], steps)


def stats(requests: list[Request], wall: float, busy_draft: float, busy_verify: float, steps: int) -> DecodeStats:
    return DecodeStats([r.tokens for r in requests], wall, busy_draft, busy_verify, sum(r.drafted for r in requests),
                       sum(r.accepted for r in requests), sum(r.verifications for r in requests),
                       [r.finished_s for r in requests], steps)
