"""The GPU variants of spec §6.3 (full profile, run only where CUDA is present):
- PSD-gpu+cpu (variant B, a genuine two-device layout): the target worker process runs its model on the GPU, the
  drafter worker stays on its CPU core.
- PSD-2stream (variant A): drafter and target on two CUDA streams of one GPU, each driven by a thread of this
  process (a stream belongs to one CUDA context, so both must live in one process; the GIL is released while CUDA
  works and while the host waits for it).
- SD-gpu: standard SD with both models on the GPU in one worker process, the baseline both are compared with.
Every forward's logits are copied to the host (tasks.lm.speculative.last_logits), so a handler's busy time covers
the GPU's work: no separate synchronisation is needed before reading the clock.
"""
from __future__ import annotations

from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from .worker import HANDLERS, Worker, load

GPU_CONFIGS = ("SD-gpu", "PSD-gpu+cpu", "PSD-2stream")


def cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


class StreamWorker:
    """Worker's send / receive / call over the same handlers, run by one thread of this process on its own CUDA
    stream (PSD-2stream's drafter or target)."""

    def __init__(self, target: str | None = None, drafter: str | None = None, device: str = "cuda"):
        import torch

        self.state: dict = {}
        self.stream = torch.cuda.Stream(device)
        self.thread = ThreadPoolExecutor(1)
        self.pending: deque[Future] = deque()
        self.thread.submit(load, self.state, target, drafter, device).result()

    def _run(self, command: str, args: dict):
        import torch

        with torch.cuda.stream(self.stream):  # the current stream is per thread: this thread's work goes here
            return HANDLERS[command](self.state, **args)

    def send(self, command: str, **args) -> None:
        self.pending.append(self.thread.submit(self._run, command, args))

    def receive(self):
        return self.pending.popleft().result()

    def call(self, command: str, **args):
        self.send(command, **args)
        return self.receive()

    def close(self) -> None:
        self.thread.shutdown()


@dataclass
class GpuWorkers:
    """`main`: a worker process holding both models on the GPU (SD-gpu, and PSD-gpu+cpu's target); `draft_stream`
    and `verify_stream`: PSD-2stream's two stream workers. PSD-gpu+cpu's drafter is the CPU drafter worker."""

    main: Worker
    draft_stream: StreamWorker
    verify_stream: StreamWorker

    @classmethod
    def start(cls, core: int, target: str, drafter: str) -> "GpuWorkers":
        workers = cls(Worker([core], 1, target, drafter, device="cuda"), StreamWorker(drafter=drafter),
                      StreamWorker(target=target))
        workers.main.ready()
        return workers

    def close(self) -> None:
        self.main.close()
        self.draft_stream.close()
        self.verify_stream.close()
