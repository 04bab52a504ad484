"""The federated loop of spec §3.1, written once over a transport: `exchange(task, round, broadcast)` returns
every client's reply in client order. The run's method (methods.METHODS) says what clients and server do. The
in-process transport calls its client functions directly (smoke and default profiles: deterministic, no
processes); flower.py's ServerApp passes a transport that sends Flower Messages to SuperNodes, so both engines run
the same code and give the same numbers."""
from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np

from tasks.core.device import single_torch_thread
from tasks.federated.local import correct
from tasks.federated.messages import Message, set_weights
from tasks.federated.method import ModelFactory, ServerState

from .config import FedConfig
from .data import Federation
from .methods import METHODS
from .model import run_model

# exchange(task, round, broadcast) -> replies in client order; task "train" or "personalize"
Exchange = Callable[[str, int, Message], list[Message]]
TRAIN, PERSONALIZE = "train", "personalize"


@dataclass
class RunResult:
    """One federated run, the same shape for every method (FedProto / local-only: global accuracy is the mean of
    the clients' own models on the global test set, by construction low)."""

    method: str
    global_accuracy: float
    personal_accuracy: float
    personal_by_client: list[float]
    history: dict[str, list[float]]  # per round: global_accuracy, bytes_up, bytes_down, FedCDWA diagnostics
    bytes_up_per_round: float  # all clients together, float32/int64 payloads as sent
    bytes_down_per_round: float
    wall_time_s: float
    final: ServerState = field(repr=False, default=None)


def weights_digest(weights: dict[str, np.ndarray] | None) -> str | None:
    """sha256 of the weights in key order: equal digests mean bit-identical models."""
    if weights is None:
        return None
    h = hashlib.sha256()
    for key in sorted(weights):
        h.update(key.encode())
        h.update(np.ascontiguousarray(weights[key]).tobytes())
    return h.hexdigest()


def result_record(result: RunResult) -> dict:
    """A RunResult as JSON (the final weights as a digest)."""
    record = {k: v for k, v in asdict(result).items() if k != "final"}
    return record | {"weights_sha256": weights_digest(result.final.weights if result.final else None)}


def nbytes(message: Message) -> int:
    return int(sum(np.asarray(v).nbytes for v in message.values()))


def score(model: ModelFactory, federation: Federation, weights: dict[str, np.ndarray]) -> float:
    return correct(set_weights(model(), weights), federation.test_x, federation.test_y) / len(federation.test_y)


def federate(cfg: FedConfig, federation: Federation, seed: int, exchange: Exchange,
             on_round: Callable[[int, dict], None] | None = None) -> RunResult:
    """Rounds of broadcast -> client_update -> server_update, then every client's personalisation."""
    started = time.perf_counter()
    method, model = METHODS[cfg.method], run_model(cfg, federation.d_in, federation.n_classes, seed)
    state = method.initial_state(model)
    history: dict[str, list[float]] = {}
    rate = lambda weights: score(model, federation, weights)  # noqa: E731
    for t in range(cfg.rounds):
        message = state.broadcast()
        replies = exchange(TRAIN, t, message)
        active = [reply for reply in replies if int(reply["n"]) > 0]  # clients with data take part
        state, info = method.server_update(cfg, active, seed=seed, round_=t, score=rate)
        row = {"bytes_down": float(nbytes(message) * len(active)), "bytes_up": float(sum(nbytes(r) for r in active))} | info
        if state.weights is not None:
            row["global_accuracy"] = rate(state.weights)
        for key, value in row.items():
            history.setdefault(key, []).append(float(value))
        if on_round is not None:
            on_round(t, row)
    evaluations = exchange(PERSONALIZE, cfg.rounds, state.broadcast())
    personal = [int(e["personal_correct"]) / int(e["personal_n"]) for e in evaluations if int(e["personal_n"]) > 0]
    if state.weights is not None:
        global_accuracy = history["global_accuracy"][-1]
    else:
        global_accuracy = float(np.mean([int(e["global_correct"]) / int(e["global_n"]) for e in evaluations
                                         if int(e.get("global_n", 0)) > 0]))
    return RunResult(cfg.method, global_accuracy, float(np.mean(personal)), personal, history,
                     float(np.mean(history["bytes_up"])), float(np.mean(history["bytes_down"])),
                     time.perf_counter() - started, state)


def in_process(cfg: FedConfig, federation: Federation, seed: int) -> Exchange:
    """The deterministic in-process transport: client states live in this closure; clients without data reply
    {"n": 0} and are skipped by the server."""
    method, model = METHODS[cfg.method], run_model(cfg, federation.d_in, federation.n_classes, seed)
    states: dict[int, Message] = {}

    def exchange(task: str, round_: int, message: Message) -> list[Message]:
        replies = []
        for k, data in enumerate(federation.clients):
            if task == TRAIN:
                if data.n_train == 0:
                    replies.append({"n": np.array(0, np.int64)})
                    continue
                reply, states[k] = method.client_update(cfg, message, states.get(k, {}), data, model=model,
                                                        n_classes=federation.n_classes, seed=seed, round_=round_, client=k)
            else:
                test = (federation.test_x, federation.test_y) if method.own_models else (None, None)
                reply = method.personalize(cfg, message, states.get(k, {}), data, model=model, seed=seed, client=k,
                                           test_x=test[0], test_y=test[1])
                reply = {key: np.array(value, np.int64) for key, value in reply.items()}
            replies.append(reply)
        return replies

    return exchange


def run_inprocess(cfg: FedConfig, federation: Federation, seed: int,
                  on_round: Callable[[int, dict], None] | None = None) -> RunResult:
    single_torch_thread()  # the float32 sums of a matmul depend on the thread count; the Flower apps use one too
    return federate(cfg, federation, seed, in_process(cfg, federation, seed), on_round)
