"""The orchestrator's handle on a worker process: arrays come back as sent, a worker's error is raised with its
message, and a worker that dies is reported as exited, unread commands or not."""
from __future__ import annotations

import numpy as np
import pytest

from flows.minedraft.worker import Worker


def test_a_worker_answers_fails_with_its_message_and_is_reported_when_it_dies():
    with Worker([0], 1) as worker:
        payload = ([[0, 1], [2, 3]], np.arange(12.0).reshape(2, 2, 3))
        contexts, q = worker.call("ping", payload=payload)
        assert contexts == payload[0] and q.dtype == payload[1].dtype and np.array_equal(q, payload[1])
        with pytest.raises(RuntimeError, match=rf"worker {worker.process.pid}: KeyError: 'busy'"):
            worker.call("busy")  # before `reset`
        worker.send("matmul", size=256, repeats=100_000)
        worker.send("ping")  # unread when the worker dies
        worker.process.kill()
        with pytest.raises(RuntimeError, match=rf"worker {worker.process.pid} exited \(code -9\)"):
            worker.receive()
