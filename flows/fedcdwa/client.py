"""FedCDWA's client side (spec §3.1), pure functions of arrays that both engines call: (a) the global branch, trained
toward the global class statistics and summarised per class for HWA; (b) the personal branch, distilled from the
global model after the final round and never uploaded.

RNG streams: the global branch draws batches from derive_seed(seed, "client", k, round); the sub-prototype
k-means from (seed, "kmeans", k, round); the personal branch from (seed, "personal", k); so the aggregated
model never depends on the personal branch (spec §10.6)."""
from __future__ import annotations

import numpy as np
import torch

from tasks.core.seeding import derive_seed
from tasks.federated.kmeans import kmeans
from tasks.federated.local import (ClientData, features, personal_generator, personal_score, round_generator,
                                   train_local, validation_counts)
from tasks.federated.messages import Message, candidates_in, get_weights, set_weights, weights_in, weights_out
from tasks.federated.method import ModelFactory

from .config import FedConfig
from .losses import distillation, pvda


def _stats_tensors(broadcast: Message):
    """(mu, sigma, known) of the global statistics as tensors, None before the server has any."""
    if "mu" not in broadcast:
        return None
    return (torch.from_numpy(broadcast["mu"].astype(np.float32)), torch.from_numpy(broadcast["sigma"].astype(np.float32)),
            torch.from_numpy(broadcast["known"].astype(bool)))


def class_statistics(z: np.ndarray, y: np.ndarray, n_classes: int, n_sub: int, rng: np.random.Generator) -> Message:
    """Per class c: count n_c, prototype (mean feature), per-dimension std, and n_sub k-means sub-prototypes with
    their masses (zero rows and masses where the class is absent or has fewer distinct points). float32 on the wire."""
    d = z.shape[1]
    counts = np.zeros(n_classes, np.int64)
    protos, stds = np.zeros((n_classes, d), np.float32), np.zeros((n_classes, d), np.float32)
    sub, mass = np.zeros((n_classes, n_sub, d), np.float32), np.zeros((n_classes, n_sub), np.float32)
    for c in range(n_classes):
        zc = z[y == c]
        counts[c] = len(zc)
        if len(zc) == 0:
            continue
        protos[c], stds[c] = zc.mean(0), zc.std(0)
        centres, masses = kmeans(zc, n_sub, rng)
        sub[c, :len(centres)], mass[c, :len(masses)] = centres, masses
    return {"counts": counts, "protos": protos, "stds": stds, "sub": sub, "mass": mass}


def global_branch(cfg: FedConfig, broadcast: Message, state: Message, data: ClientData, *, model: ModelFactory,
                  n_classes: int, seed: int, round_: int, client: int) -> tuple[Message, Message]:
    """(a) G_k <- G, E epochs of CE + PVDA toward the global statistics (never distilled toward a teacher); sends
    G_k's weights, n_k, the mean PVDA term and G_k's class statistics."""
    net = set_weights(model(), weights_in(broadcast))
    stats = _stats_tensors(broadcast)
    extra = None
    if stats is not None and (cfg.lam_gm > 0 or cfg.lam_gv > 0):
        mu, sigma, known = stats
        extra = lambda z, logits, x, y: pvda(z, y, mu, sigma, known, cfg.lam_gm, cfg.lam_gv)  # noqa: E731
    pvda_mean = train_local(net, data.x_train, data.y_train, cfg, cfg.local_epochs,
                            round_generator(seed, client, round_), extra)
    summary = {}
    if data.n_train > 0:
        rng = np.random.default_rng(derive_seed(seed, "kmeans", client, round_))
        summary = class_statistics(features(net, data.x_train), data.y_train, n_classes, cfg.sub_prototypes, rng)
    n = np.array(data.n_train, np.int64)
    return weights_out(get_weights(net)) | {"n": n, "pvda": np.array(pvda_mean)} | summary, state


def personal_branch(cfg: FedConfig, broadcast: Message, state: Message, data: ClientData, *, model: ModelFactory,
                    seed: int, client: int, test_x=None, test_y=None) -> dict[str, int]:
    """(b) P_k <- G, E_p epochs of CE + lam_kd T^2 KL(G || P_k) + PVDA toward the global statistics, scored on the
    client's local test split."""
    net = set_weights(model(), weights_in(broadcast))
    teacher = set_weights(model(), weights_in(broadcast)).eval()
    stats = _stats_tensors(broadcast)

    def extra(z, logits, x, y):
        with torch.no_grad():
            teacher_logits = teacher(x)[1]
        term = cfg.lam_kd * distillation(logits, teacher_logits, cfg.temperature)
        if stats is not None and (cfg.lam_pm > 0 or cfg.lam_pv > 0):
            term = term + pvda(z, y, *stats[:2], stats[2], cfg.lam_pm, cfg.lam_pv)
        return term
    train_local(net, data.x_train, data.y_train, cfg, cfg.personal_epochs, personal_generator(seed, client), extra)
    return personal_score(net, data)


def score_candidates(message: Message, data: ClientData, *, model: ModelFactory) -> Message:
    """Every candidate model of the message scored on the client's validation split (the server-step gate)."""
    return validation_counts([set_weights(model(), weights) for weights in candidates_in(message)], data)
