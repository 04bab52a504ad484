"""A federated method as the functions a federated loop calls, each a pure function of arrays so that any transport
(in process, Flower) runs the same numbers. fedavg.py and fedproto.py declare the baselines; a paper declares its
own method the same way and picks one per run from a table of them."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from torch import nn

from .messages import Message, get_weights, weights_out

# A fresh copy of the run's initial model, the same on the server and on every client; forward x -> (z, logits).
ModelFactory = Callable[[], nn.Module]


@dataclass(frozen=True)
class ServerState:
    """The server's state after a round: the global model, and what else every client receives with it."""

    weights: dict[str, np.ndarray] | None  # None where the clients keep their own models
    shared: Message = field(default_factory=dict)  # e.g. FedProto's class prototypes

    def broadcast(self) -> Message:
        return (weights_out(self.weights) if self.weights is not None else {}) | self.shared


@dataclass(frozen=True)
class Method:
    """What one method does at each step (cfg: the run's config, read by attribute):

    - client_update(cfg, broadcast, state, data, *, model, n_classes, seed, round_, client) -> (reply, state):
      one round of local work on ClientData; `state` is what the client keeps between rounds ({} at first).
    - server_update(cfg, replies, *, seed, round_, score, validate) -> (ServerState, diagnostics): the replies of the
      clients that hold data, in client order; score(weights) -> accuracy on the server's test set, for diagnostics
      only; validate([weights, ...]) -> each candidate's accuracy on the validation splits this round's clients hold
      (None where they hold none), the only accuracy a server step may decide on.
    - personalize(cfg, broadcast, state, data, *, model, seed, client, test_x, test_y) -> counts: after the last
      round, {"personal_correct", "personal_n"} on the local test split; with own models also {"global_correct",
      "global_n"} on (test_x, test_y), the server's test set, their only global model.
    """

    own_models: bool  # the clients keep their own model between rounds; the server holds none
    client_update: Callable[..., tuple[Message, Message]]
    server_update: Callable[..., tuple[ServerState, dict]]
    personalize: Callable[..., dict[str, int]]

    def initial_state(self, model: ModelFactory) -> ServerState:
        return ServerState(None if self.own_models else get_weights(model()))
