"""The client side of every method, as pure functions of arrays (spec §9): what a client receives (`broadcast`),
keeps between rounds (`state`: FedProto and local-only keep their own model) and holds (`data`) -> what it sends.
Both engines (engine.py in process, flower_app/ on Flower) call exactly these; messages are flat
{name: ndarray} dicts, weights under "w.<parameter>".

RNG streams: the global branch draws batches from derive_seed(seed, "client", k, round); the sub-prototype
k-means from (seed, "kmeans", k, round); the personal branch from (seed, "personal", k); so the aggregated
model never depends on the personal branch (spec §10.6)."""
from __future__ import annotations

import numpy as np
import torch

from tasks.core.seeding import derive_seed
from tasks.federated.kmeans import kmeans

from .config import FedConfig
from .local import ClientData, correct, features, train_local
from .losses import distillation, pvda
from .model import FeatureNet, build, get_weights, set_weights

Message = dict[str, np.ndarray]
WEIGHT_PREFIX = "w."
STATEFUL = ("fedproto", "local")  # clients that keep their own model; the rest start each round from the global one


def weights_in(message: Message) -> dict[str, np.ndarray]:
    return {k[len(WEIGHT_PREFIX):]: v for k, v in message.items() if k.startswith(WEIGHT_PREFIX)}


def weights_out(weights: dict[str, np.ndarray]) -> Message:
    return {WEIGHT_PREFIX + k: v for k, v in weights.items()}


def new_model(cfg: FedConfig, d_in: int, n_classes: int, seed: int) -> FeatureNet:
    """The run's initial model: the same on the server and on every client (one init seed per run)."""
    return build(d_in, n_classes, cfg.hidden, cfg.feature_dim, derive_seed(seed, "init"))


def _global_model(cfg: FedConfig, broadcast: Message, data: ClientData, n_classes: int) -> FeatureNet:
    model = FeatureNet(data.x_train.shape[1], cfg.hidden, cfg.feature_dim, n_classes)
    return set_weights(model, weights_in(broadcast))


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


def client_update(cfg: FedConfig, broadcast: Message, state: Message, data: ClientData, *, n_classes: int,
                  seed: int, round_: int, client: int) -> tuple[Message, Message]:
    """One round of local work: (reply to the server, the client's state for the next round)."""
    generator = torch.Generator().manual_seed(derive_seed(seed, "client", client, round_))
    n = np.array(data.n_train, np.int64)
    if cfg.method in STATEFUL:
        return _prototype_client(cfg, broadcast, state, data, n_classes, seed, generator)
    model = _global_model(cfg, broadcast, data, n_classes)
    if cfg.method in ("fedavg", "fedavg_ft"):
        train_local(model, data.x_train, data.y_train, cfg, cfg.local_epochs, generator)
        return weights_out(get_weights(model)) | {"n": n}, state
    # FedCDWA (a): the global branch, CE + PVDA toward the global statistics; never distilled toward a teacher
    stats = _stats_tensors(broadcast)
    extra = None
    if stats is not None and (cfg.lam_gm > 0 or cfg.lam_gv > 0):
        mu, sigma, known = stats
        extra = lambda z, logits, x, y: pvda(z, y, mu, sigma, known, cfg.lam_gm, cfg.lam_gv)  # noqa: E731
    pvda_mean = train_local(model, data.x_train, data.y_train, cfg, cfg.local_epochs, generator, extra)
    summary = {}
    if data.n_train > 0:
        rng = np.random.default_rng(derive_seed(seed, "kmeans", client, round_))
        summary = class_statistics(features(model, data.x_train), data.y_train, n_classes, cfg.sub_prototypes, rng)
    return weights_out(get_weights(model)) | {"n": n, "pvda": np.array(pvda_mean)} | summary, state


def _prototype_client(cfg: FedConfig, broadcast: Message, state: Message, data: ClientData, n_classes: int, seed: int,
                      generator: torch.Generator) -> tuple[Message, Message]:
    """FedProto (and local-only, lam = 0): the client's own model, CE + lam |z_i - p_{y_i}|^2 toward the global
    class prototypes; it sends its class means and counts."""
    model = new_model(cfg, data.x_train.shape[1], n_classes, seed)
    if state:
        set_weights(model, weights_in(state))
    extra = None
    if cfg.method == "fedproto" and "protos" in broadcast:
        protos, known = torch.from_numpy(broadcast["protos"]), torch.from_numpy(broadcast["known"].astype(bool))

        def extra(z, logits, x, y):
            mask = known[y]
            if not bool(mask.any()):
                return z.new_zeros(())
            return cfg.lam_proto * ((z[mask] - protos[y[mask]]) ** 2).sum(1).mean()
    train_local(model, data.x_train, data.y_train, cfg, cfg.local_epochs, generator, extra)
    reply: Message = {"n": np.array(data.n_train, np.int64)}
    if cfg.method == "fedproto" and data.n_train > 0:
        z = features(model, data.x_train)
        counts = np.bincount(data.y_train, minlength=n_classes).astype(np.int64)
        protos = np.zeros((n_classes, z.shape[1]), np.float32)
        for c in np.flatnonzero(counts):
            protos[c] = z[data.y_train == c].mean(0)
        reply |= {"counts": counts, "protos": protos}
    return reply, weights_out(get_weights(model))


def personalize(cfg: FedConfig, broadcast: Message, state: Message, data: ClientData, *, n_classes: int, seed: int,
                client: int, test_x: np.ndarray | None = None, test_y: np.ndarray | None = None) -> dict[str, int]:
    """The client's personalised model after the final round, scored on its local test split: FedAvg the global
    model itself; FedAvg-FT the global model fine-tuned E_p epochs with CE; FedCDWA the personal branch (§3.1b,
    P_k re-initialised from G); FedProto / local-only the client's own model, also scored on the shared test set
    (test_x, test_y), their only "global" model."""
    out = {"personal_correct": 0, "personal_n": int(len(data.y_test))}
    if cfg.method in STATEFUL:
        model = set_weights(new_model(cfg, data.x_train.shape[1], n_classes, seed), weights_in(state))
        out["personal_correct"] = correct(model, data.x_test, data.y_test)
        if test_x is not None:
            out |= {"global_correct": correct(model, test_x, test_y), "global_n": int(len(test_y))}
        return out
    model = _global_model(cfg, broadcast, data, n_classes)
    generator = torch.Generator().manual_seed(derive_seed(seed, "personal", client))
    if cfg.method == "fedavg_ft":
        train_local(model, data.x_train, data.y_train, cfg, cfg.personal_epochs, generator)
    elif cfg.method == "fedcdwa":
        teacher = _global_model(cfg, broadcast, data, n_classes).eval()
        stats = _stats_tensors(broadcast)

        def extra(z, logits, x, y):
            with torch.no_grad():
                teacher_logits = teacher(x)[1]
            term = cfg.lam_kd * distillation(logits, teacher_logits, cfg.temperature)
            if stats is not None and (cfg.lam_pm > 0 or cfg.lam_pv > 0):
                term = term + pvda(z, y, *stats[:2], stats[2], cfg.lam_pm, cfg.lam_pv)
            return term
        train_local(model, data.x_train, data.y_train, cfg, cfg.personal_epochs, generator, extra)
    out["personal_correct"] = correct(model, data.x_test, data.y_test)
    return out
