"""FedAvg (McMahan et al. 2017) and FedAvg-FT: every client trains the global model E epochs with CE, the server
averages the models weighted by sample count. Personalised: FedAvg scores the global model itself on each local
test split, FedAvg-FT first fine-tunes it E_p epochs with CE on the client's data."""
from __future__ import annotations

import numpy as np

from .averaging import weighted_average
from .local import ClientData, LocalTraining, personal_generator, personal_score, round_generator, train_local
from .messages import Message, get_weights, set_weights, weights_in, weights_out
from .method import Method, ModelFactory, ServerState


def train_global(cfg: LocalTraining, broadcast: Message, state: Message, data: ClientData, *, model: ModelFactory,
                 n_classes: int, seed: int, round_: int, client: int) -> tuple[Message, Message]:
    net = set_weights(model(), weights_in(broadcast))
    train_local(net, data.x_train, data.y_train, cfg, cfg.local_epochs, round_generator(seed, client, round_))
    return weights_out(get_weights(net)) | {"n": np.array(data.n_train, np.int64)}, state


def average(cfg: LocalTraining, replies: list[Message], *, seed: int, round_: int, score=None,
            validate=None) -> tuple[ServerState, dict]:
    return ServerState(weighted_average([weights_in(r) for r in replies], [int(r["n"]) for r in replies])), {}


def score_global(cfg: LocalTraining, broadcast: Message, state: Message, data: ClientData, *, model: ModelFactory,
                 seed: int, client: int, test_x=None, test_y=None) -> dict[str, int]:
    return personal_score(set_weights(model(), weights_in(broadcast)), data)


def fine_tune(cfg: LocalTraining, broadcast: Message, state: Message, data: ClientData, *, model: ModelFactory,
              seed: int, client: int, test_x=None, test_y=None) -> dict[str, int]:
    net = set_weights(model(), weights_in(broadcast))
    train_local(net, data.x_train, data.y_train, cfg, cfg.personal_epochs, personal_generator(seed, client))
    return personal_score(net, data)


FEDAVG = Method(own_models=False, client_update=train_global, server_update=average, personalize=score_global)
FEDAVG_FT = Method(own_models=False, client_update=train_global, server_update=average, personalize=fine_tune)
