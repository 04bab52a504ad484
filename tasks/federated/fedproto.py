"""FedProto (Tan et al. 2022) and local-only training: no weight sharing, every client trains its own model.
FedProto's clients send their class prototypes (mean features) and counts, the server broadcasts the count-weighted
prototypes, and the local loss is CE + lam_proto |z_i - p_{y_i}|^2; local-only sends nothing but its sample count.
Their "global" accuracy is the clients' own models on the server's test set, low by construction."""
from __future__ import annotations

from typing import Protocol

import numpy as np
import torch

from .local import ClientData, LocalTraining, correct, features, personal_score, round_generator, train_local
from .messages import Message, get_weights, set_weights, weights_in, weights_out
from .method import Method, ModelFactory, ServerState


class PrototypeTraining(LocalTraining, Protocol):
    lam_proto: float  # weight of the pull toward the global prototypes


def _own_model(model: ModelFactory, state: Message):
    """The client's model: the run's initial one until it has trained its own."""
    return set_weights(model(), weights_in(state)) if state else model()


def train_own(cfg: LocalTraining, broadcast: Message, state: Message, data: ClientData, *, model: ModelFactory,
              n_classes: int, seed: int, round_: int, client: int) -> tuple[Message, Message]:
    net = _own_model(model, state)
    train_local(net, data.x_train, data.y_train, cfg, cfg.local_epochs, round_generator(seed, client, round_))
    return {"n": np.array(data.n_train, np.int64)}, weights_out(get_weights(net))


def train_toward_prototypes(cfg: PrototypeTraining, broadcast: Message, state: Message, data: ClientData, *,
                            model: ModelFactory, n_classes: int, seed: int, round_: int,
                            client: int) -> tuple[Message, Message]:
    net = _own_model(model, state)
    extra = None
    if "protos" in broadcast:  # none before the first aggregation
        protos, known = torch.from_numpy(broadcast["protos"]), torch.from_numpy(broadcast["known"].astype(bool))

        def extra(z, logits, x, y):
            mask = known[y]
            if not bool(mask.any()):
                return z.new_zeros(())
            return cfg.lam_proto * ((z[mask] - protos[y[mask]]) ** 2).sum(1).mean()
    train_local(net, data.x_train, data.y_train, cfg, cfg.local_epochs, round_generator(seed, client, round_), extra)
    reply: Message = {"n": np.array(data.n_train, np.int64)}
    if data.n_train > 0:
        z = features(net, data.x_train)
        counts = np.bincount(data.y_train, minlength=n_classes).astype(np.int64)
        protos = np.zeros((n_classes, z.shape[1]), np.float32)
        for c in np.flatnonzero(counts):
            protos[c] = z[data.y_train == c].mean(0)
        reply |= {"counts": counts, "protos": protos}
    return reply, weights_out(get_weights(net))


def keep_nothing(cfg: LocalTraining, replies: list[Message], *, seed: int, round_: int,
                 score=None, validate=None) -> tuple[ServerState, dict]:
    return ServerState(None), {}


def average_prototypes(cfg: PrototypeTraining, replies: list[Message], *, seed: int, round_: int,
                       score=None, validate=None) -> tuple[ServerState, dict]:
    counts = np.stack([r["counts"] for r in replies]).astype(np.float64)  # [K, C]
    protos = np.stack([r["protos"] for r in replies]).astype(np.float64)  # [K, C, D]
    total = counts.sum(0)
    mean = np.einsum("kc,kcd->cd", counts, protos) / np.maximum(total, 1)[:, None]
    return ServerState(None, shared={"protos": mean.astype(np.float32), "known": total > 0}), {}


def score_own(cfg: LocalTraining, broadcast: Message, state: Message, data: ClientData, *, model: ModelFactory,
              seed: int, client: int, test_x: np.ndarray | None = None,
              test_y: np.ndarray | None = None) -> dict[str, int]:
    if data.n_train == 0:  # never trained: no model of its own to score
        return {"personal_correct": 0, "personal_n": 0}
    net = set_weights(model(), weights_in(state))
    out = personal_score(net, data)
    if test_x is not None:
        out |= {"global_correct": correct(net, test_x, test_y), "global_n": int(len(test_y))}
    return out


LOCAL_ONLY = Method(own_models=True, client_update=train_own, server_update=keep_nothing, personalize=score_own)
FEDPROTO = Method(own_models=True, client_update=train_toward_prototypes, server_update=average_prototypes,
                  personalize=score_own)
