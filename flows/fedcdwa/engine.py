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
from tasks.core.seeding import derive_seed
from tasks.federated.local import correct
from tasks.federated.messages import Message, candidates_out, set_weights
from tasks.federated.method import ModelFactory, ServerState

from .client import score_candidates
from .config import FedConfig
from .data import Federation
from .methods import METHODS
from .model import run_model

# exchange(task, round, message, clients) -> the replies of `clients` (client indices), in that order; task "train",
# "validate" (score candidate models on the clients' validation splits) or "personalize"
Exchange = Callable[[str, int, Message, list[int]], list[Message]]
TRAIN, VALIDATE, PERSONALIZE = "train", "validate", "personalize"


@dataclass
class RunResult:
    """One federated run, the same shape for every method (FedProto / local-only: global accuracy is the mean of
    the clients' own models on the global test set, by construction low)."""

    method: str
    global_accuracy: float  # the mean over the last rounds (cfg.last_rounds), not the final round's alone
    personal_accuracy: float  # likewise: every client personalises after each of the last rounds
    personal_by_client: list[float]  # each client's mean over the last rounds (clients with a local test split)
    history: dict[str, list[float]]  # per round: global_accuracy, bytes_up, bytes_down, FedCDWA diagnostics
    last_rounds: dict[str, list[float]]  # per evaluated round: its index, personal (and global) accuracy
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


def participants(cfg: FedConfig, n_clients: int, seed: int, round_: int) -> list[int]:
    """The round's clients: all of them, or round(participation K) (at least one) drawn without replacement."""
    if cfg.participation >= 1:
        return list(range(n_clients))
    rng = np.random.default_rng(derive_seed(seed, "participation", round_))
    size = max(1, round(cfg.participation * n_clients))
    return sorted(int(k) for k in rng.choice(n_clients, size=size, replace=False))


def evaluated_rounds(cfg: FedConfig) -> range:
    """The last min(last_rounds, rounds) rounds, whose accuracies are averaged (one round's swing is not a result)."""
    return range(max(0, cfg.rounds - cfg.last_rounds), cfg.rounds)


def validator(exchange: Exchange, round_: int, clients: list[int], traffic: dict[str, float]):
    """validate(candidates) -> each candidate's accuracy on the validation splits of `clients` (None where they hold
    none), counting the exchange's bytes in `traffic`."""
    def validate(candidates: list[dict[str, np.ndarray]]) -> list[float] | None:
        message = candidates_out(candidates)
        replies = exchange(VALIDATE, round_, message, clients)
        traffic["down"] += nbytes(message) * len(clients)
        traffic["up"] += sum(nbytes(r) for r in replies)
        total = sum(int(r["validation_n"]) for r in replies)
        if total == 0:
            return None
        return (np.sum([r["validation_correct"] for r in replies], axis=0) / total).tolist()

    return validate


def personal_accuracies(evaluations: list[Message]) -> list[float]:
    """Each client's personalised accuracy; NaN for a client without a local test split."""
    return [int(e["personal_correct"]) / int(e["personal_n"]) if int(e["personal_n"]) > 0 else float("nan")
            for e in evaluations]


def own_global_accuracy(evaluations: list[Message]) -> float:
    """Methods without a global model: the mean of the clients' own models on the server's test set."""
    return float(np.mean([int(e["global_correct"]) / int(e["global_n"]) for e in evaluations
                          if int(e.get("global_n", 0)) > 0]))


def federate(cfg: FedConfig, federation: Federation, seed: int, exchange: Exchange, n_clients: int,
             on_round: Callable[[int, dict], None] | None = None) -> RunResult:
    """Rounds of broadcast -> client_update (the round's participants among the n_clients) -> server_update; after
    each of the last rounds, every client's personalisation. Accuracies are the means over those rounds. (The
    server's `federation` holds the test set; its clients are the transport's.)"""
    started = time.perf_counter()
    method, model = METHODS[cfg.method], run_model(cfg, federation.d_in, federation.n_classes, seed)
    state = method.initial_state(model)
    history: dict[str, list[float]] = {}
    last: dict[str, list[float]] = {"round": [], "personal_accuracy": [], "global_accuracy": []}
    per_client = []
    everyone = list(range(n_clients))
    rate = lambda weights: score(model, federation, weights)  # noqa: E731
    for t in range(cfg.rounds):
        message = state.broadcast()
        chosen = participants(cfg, len(everyone), seed, t)
        replies = exchange(TRAIN, t, message, chosen)
        taking_part = [(k, reply) for k, reply in zip(chosen, replies) if int(reply["n"]) > 0]  # clients with data
        traffic = {"down": 0.0, "up": 0.0}
        state, info = method.server_update(cfg, [reply for _, reply in taking_part], seed=seed, round_=t, score=rate,
                                           validate=validator(exchange, t, [k for k, _ in taking_part], traffic))
        row = {"participants": float(len(taking_part)),
               "bytes_down": float(nbytes(message) * len(taking_part) + traffic["down"]),
               "bytes_up": float(sum(nbytes(r) for _, r in taking_part) + traffic["up"])} | info
        if state.weights is not None:
            row["global_accuracy"] = rate(state.weights)
        for key, value in row.items():
            history.setdefault(key, []).append(float(value))
        if t in evaluated_rounds(cfg):
            evaluations = exchange(PERSONALIZE, t, state.broadcast(), everyone)
            per_client.append(personal_accuracies(evaluations))
            last["round"].append(float(t))
            last["personal_accuracy"].append(float(np.nanmean(per_client[-1])))
            last["global_accuracy"].append(row["global_accuracy"] if state.weights is not None
                                           else own_global_accuracy(evaluations))
        if on_round is not None:
            on_round(t, row)
    by_client = [float(a) for a in np.mean(per_client, axis=0) if np.isfinite(a)]  # NaN: no local test split
    return RunResult(cfg.method, float(np.mean(last["global_accuracy"])), float(np.mean(last["personal_accuracy"])),
                     by_client, history, last, float(np.mean(history["bytes_up"])), float(np.mean(history["bytes_down"])),
                     time.perf_counter() - started, state)


def in_process(cfg: FedConfig, federation: Federation, seed: int) -> Exchange:
    """The deterministic in-process transport: client states live in this closure; clients without data reply
    {"n": 0} to a training request and are skipped by the server."""
    method, model = METHODS[cfg.method], run_model(cfg, federation.d_in, federation.n_classes, seed)
    states: dict[int, Message] = {}

    def reply(task: str, round_: int, message: Message, k: int) -> Message:
        data = federation.clients[k]
        if task == TRAIN:
            if data.n_train == 0:
                return {"n": np.array(0, np.int64)}
            out, states[k] = method.client_update(cfg, message, states.get(k, {}), data, model=model,
                                                  n_classes=federation.n_classes, seed=seed, round_=round_, client=k)
            return out
        if task == VALIDATE:
            return score_candidates(message, data, model=model)
        test = (federation.test_x, federation.test_y) if method.own_models else (None, None)
        out = method.personalize(cfg, message, states.get(k, {}), data, model=model, seed=seed, client=k,
                                 test_x=test[0], test_y=test[1])
        return {key: np.array(value, np.int64) for key, value in out.items()}

    return lambda task, round_, message, clients: [reply(task, round_, message, k) for k in clients]


def run_inprocess(cfg: FedConfig, federation: Federation, seed: int,
                  on_round: Callable[[int, dict], None] | None = None) -> RunResult:
    single_torch_thread()  # the float32 sums of a matmul depend on the thread count; the Flower apps use one too
    return federate(cfg, federation, seed, in_process(cfg, federation, seed), len(federation.clients), on_round)
