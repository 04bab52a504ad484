"""A decoding worker process pinned to its own core(s): the drafter's or the target's device in PSD, or a whole SD/AR
decoder. Started with `python -m flows.minedraft.worker FD`, FD its end of a socket pair to the orchestrator: commands
and replies are multiprocessing.connection's pickled frames, so arrays travel as they are (both ends are this program).
Processes, not threads: Python-level work would serialise on the GIL.
"""
from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import time
from multiprocessing.connection import Connection
from pathlib import Path

GONE = (EOFError, ConnectionResetError)  # the other end closed (with replies unread, a socket reads as reset)


def serve(fd: int) -> None:
    connection = Connection(fd)
    state: dict = {}
    while True:
        try:
            command, args = connection.recv()
        except GONE:
            return
        if command == "exit":
            return
        try:
            reply = ("ok", HANDLERS[command](state, **args))
        except Exception as error:  # the orchestrator re-raises it with the worker's message
            reply = ("error", f"{type(error).__name__}: {error}")
        connection.send(reply)


def setup(state: dict, cores: list[int], threads: int, target: str | None = None, drafter: str | None = None,
          device: str = "cpu") -> dict:
    load(state, target, drafter, device)
    return pin(state, cores, threads) | {"device": device}


def load(state: dict, target: str | None, drafter: str | None, device: str) -> None:
    """The models this worker runs, on `device` (a GPU variant's target or both models on "cuda")."""
    from tasks.lm.model import load_model

    state["target"] = load_model(target)[0].to(device) if target else None
    state["drafter"] = load_model(drafter)[0].to(device) if drafter else None


def pin(state: dict, cores: list[int], threads: int) -> dict:
    """Move this worker to `cores` with `threads` intra-op threads (SD-2c reuses the one-core worker this way)."""
    import torch

    os.sched_setaffinity(0, set(cores))
    torch.set_num_threads(threads)
    return {"pid": os.getpid(), "cores": sorted(os.sched_getaffinity(0)), "threads": torch.get_num_threads()}


def reset(state: dict, seed: int) -> None:
    from tasks.lm.speculative import ACCEPT_STREAM, DRAFT_STREAM, Streams

    state["draft_rngs"], state["accept_rngs"] = Streams(seed, DRAFT_STREAM), Streams(seed, ACCEPT_STREAM)
    state["busy"] = 0.0


def draft(state: dict, contexts, rids, k: int, temperature: float):
    from tasks.lm.speculative import draft_tokens

    t0 = time.perf_counter()
    out = draft_tokens(state["drafter"], contexts, k, temperature, state["draft_rngs"](rids))
    state["busy"] += time.perf_counter() - t0
    return out


def verify(state: dict, contexts, rids, drafts, q, temperature: float):
    from tasks.lm.speculative import verify_and_accept

    t0 = time.perf_counter()
    out = verify_and_accept(state["target"], contexts, drafts, q, temperature, state["accept_rngs"](rids))
    state["busy"] += time.perf_counter() - t0
    return out


def busy(state: dict) -> float:
    return state["busy"]


def decode(state: dict, prompts, max_new: int, k: int, temperature: float, batch: int, seed: int, method: str) -> dict:
    """A whole AR or SD run inside this worker; the wall time covers the decode loop only."""
    from tasks.lm.speculative import decode as run

    drafter = state["drafter"] if method == "sd" else None
    return run(state["target"], drafter, prompts, max_new=max_new, k=k if method == "sd" else 0,
               temperature=temperature, batch=batch, seed=seed).as_dict()


def matmul(state: dict, size: int, repeats: int) -> float:
    """Seconds for a fixed matmul workload (the parallel-efficiency probe)."""
    import torch

    a = torch.randn(size, size, generator=torch.Generator().manual_seed(0))
    t0 = time.perf_counter()
    for _ in range(repeats):
        a = torch.tanh(a @ a / size)
    return time.perf_counter() - t0


def median_seconds(fn, repeats: int) -> float:
    """Median seconds of `fn()` over `repeats` calls after one warm-up call."""
    import statistics

    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(statistics.median(times))


def draft_cost(state: dict, contexts, k: int, temperature: float, repeats: int) -> float:
    """Median seconds of one step's drafting on these contexts (k drafter forwards and the sampling, as `draft`
    does); the calibration's own PRNG streams, so the run's are untouched."""
    from tasks.lm.speculative import DRAFT_STREAM, Streams, draft_tokens

    rngs = Streams(0, DRAFT_STREAM)(range(len(contexts)))
    return median_seconds(lambda: draft_tokens(state["drafter"], contexts, k, temperature, rngs), repeats)


def verify_cost(state: dict, contexts, k: int, temperature: float, repeats: int) -> float:
    """Median seconds of one step's verification on these contexts (the target forward over k drafts and the
    sampler, as `verify` does). The drafts repeat each context's last k tokens under a uniform q: the cost does not
    depend on which tokens they are."""
    import numpy as np

    from tasks.lm.speculative import ACCEPT_STREAM, Streams, verify_and_accept

    drafts = [list(c[-k:]) for c in contexts]
    vocab = state["target"].config.vocab_size
    q = None if temperature == 0 else np.full((len(contexts), k, vocab), 1.0 / vocab)
    rngs = Streams(0, ACCEPT_STREAM)(range(len(contexts)))
    return median_seconds(lambda: verify_and_accept(state["target"], contexts, drafts, q, temperature, rngs), repeats)


def ping(state: dict, payload=None):
    return payload


HANDLERS = {"setup": setup, "pin": pin, "reset": reset, "draft": draft, "verify": verify, "busy": busy, "decode": decode,
            "matmul": matmul, "draft_cost": draft_cost, "verify_cost": verify_cost, "ping": ping}


class Worker:
    """The orchestrator's handle on one worker process: `call` waits for the reply, `send`/`receive` overlap work.
    Start-up (imports, model loading) runs while the caller goes on; the first `receive` waits for it."""

    def __init__(self, cores: list[int], threads: int, target: str | None = None, drafter: str | None = None,
                 device: str = "cpu"):
        root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ, OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads),
                   PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
        self.connection, theirs = multiprocessing.Pipe()
        self.process = subprocess.Popen([sys.executable, "-m", "flows.minedraft.worker", str(theirs.fileno())],
                                        pass_fds=[theirs.fileno()], env=env, cwd=root)
        theirs.close()
        self.info = None
        self.send("setup", cores=cores, threads=threads, target=target, drafter=drafter, device=device)

    def send(self, command: str, **args) -> None:
        if self.info is None and command != "setup":
            self.ready()
        self.connection.send((command, args))

    def ready(self) -> dict:
        if self.info is None:
            self.info = self._reply()
        return self.info

    def receive(self):
        self.ready()
        return self._reply()

    def _reply(self):
        try:
            status, value = self.connection.recv()
        except GONE:
            raise RuntimeError(f"worker {self.process.pid} exited (code {self.process.wait()})") from None
        if status == "error":
            raise RuntimeError(f"worker {self.process.pid}: {value}")
        return value

    def call(self, command: str, **args):
        self.send(command, **args)
        return self.receive()

    def close(self) -> None:
        if self.process.poll() is None:
            self.send("exit")
            self.connection.close()
            self.process.wait(timeout=30)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


if __name__ == "__main__":
    serve(int(sys.argv[1]))
