"""The server side of every method, as pure functions (spec §9): aggregate the replies of one round into the next
global state, and say what to broadcast. FedAvg / FedAvg-FT: weighted parameter average; FedCDWA: the same,
then HWA of the class statistics (hwa.py) and server-side mutual distillation of the global head on virtual
features (§3.4); FedProto: count-weighted class prototypes; local-only: nothing."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from tasks.core.seeding import derive_seed
from tasks.federated.averaging import weighted_average

from . import hwa
from .client import STATEFUL, Message, new_model, weights_in, weights_out
from .config import FedConfig
from .model import get_weights


@dataclass
class ServerState:
    weights: dict[str, np.ndarray] | None  # the global model G (None: FedProto, local-only)
    stats: hwa.GlobalStatistics | None = None  # FedCDWA
    protos: tuple[np.ndarray, np.ndarray] | None = None  # FedProto: (prototypes [C, D], known [C])


def server_init(cfg: FedConfig, d_in: int, n_classes: int, seed: int) -> ServerState:
    return ServerState(None if cfg.method in STATEFUL else get_weights(new_model(cfg, d_in, n_classes, seed)))


def broadcast(state: ServerState) -> Message:
    """What every client receives: G's weights, FedCDWA's {mu, sigma}, FedProto's prototypes (none in round 0)."""
    message: Message = weights_out(state.weights) if state.weights is not None else {}
    if state.stats is not None:
        message |= {"mu": state.stats.mu.astype(np.float32), "sigma": state.stats.sigma.astype(np.float32),
                    "known": state.stats.known}
    if state.protos is not None:
        message |= {"protos": state.protos[0], "known": state.protos[1]}
    return message


def server_update(cfg: FedConfig, state: ServerState, replies: list[Message], *, seed: int, round_: int,
                  score: Callable[[dict[str, np.ndarray]], float] | None = None) -> tuple[ServerState, dict]:
    """(next state, diagnostics). `replies` in client order; clients without data are skipped. `score` (optional)
    rates a weights dict on the server's test set, to log FedCDWA's accuracy before the server step."""
    active = [r for r in replies if int(r["n"]) > 0]
    info: dict = {}
    if cfg.method == "local":
        return state, info
    if cfg.method == "fedproto":
        counts = np.stack([r["counts"] for r in active]).astype(np.float64)  # [K, C]
        protos = np.stack([r["protos"] for r in active]).astype(np.float64)  # [K, C, D]
        total = counts.sum(0)
        known = total > 0
        mean = np.einsum("kc,kcd->cd", counts, protos) / np.maximum(total, 1)[:, None]
        return ServerState(None, protos=(mean.astype(np.float32), known)), info
    weights = weighted_average([weights_in(r) for r in active], [int(r["n"]) for r in active])
    if cfg.method != "fedcdwa":
        return ServerState(weights), info
    stats = hwa.aggregate(*(np.stack([r[key] for r in active]) for key in ("counts", "protos", "stds", "sub", "mass")),
                          n_support=cfg.support, rng=np.random.default_rng(derive_seed(seed, "barycenter", round_)),
                          iterations=cfg.barycenter_iterations)
    info |= {"inter_class_ratio": hwa.inter_class_ratio(stats), "pvda": float(np.mean([r["pvda"] for r in active]))}
    if cfg.server_steps > 0:
        if score is not None:
            info["global_accuracy_before_server_step"] = score(weights)
        generator = torch.Generator().manual_seed(derive_seed(seed, "server", round_))
        head, info["server_loss"] = distil_head(cfg, weights, [weights_in(r) for r in active], stats, generator)
        weights = weights | head
    return ServerState(weights, stats=stats), info


def _linear(weight: np.ndarray, bias: np.ndarray) -> nn.Linear:
    layer = nn.Linear(weight.shape[1], weight.shape[0])
    layer.load_state_dict({"weight": torch.from_numpy(weight.copy()), "bias": torch.from_numpy(bias.copy())})
    return layer


def distil_head(cfg: FedConfig, weights: dict[str, np.ndarray], clients: list[dict[str, np.ndarray]],
                stats: hwa.GlobalStatistics, generator: torch.Generator) -> tuple[dict[str, np.ndarray], float]:
    """I_s SGD steps on the global head h_G only: per known class, B virtual features v = S_c[j] + kappa sigma_c xi
    (j uniform over the support, xi ~ N(0, I)); loss CE(h_G(v), c) + KL(mean_k softmax(h_k(v)) || softmax(h_G(v))),
    the ensemble of client heads teaching the aggregated head. Mild by design (§3.4: aggressive settings collapsed)."""
    head = _linear(weights["head.weight"], weights["head.bias"])
    teachers = [_linear(w["head.weight"], w["head.bias"]) for w in clients]
    opt = torch.optim.SGD(head.parameters(), lr=cfg.server_lr, momentum=cfg.server_momentum)
    classes = np.flatnonzero(stats.known)
    support = torch.from_numpy(stats.support.astype(np.float32))
    sigma = torch.from_numpy(stats.sigma.astype(np.float32))
    labels = torch.from_numpy(np.repeat(classes, cfg.server_batch).astype(np.int64))
    losses = []
    for _ in range(cfg.server_steps):
        v = torch.cat([support[c][torch.randint(int(stats.support_n[c]), (cfg.server_batch,), generator=generator)]
                       + cfg.kappa * sigma[c] * torch.randn(cfg.server_batch, sigma.shape[1], generator=generator)
                       for c in classes])
        with torch.no_grad():
            teacher = torch.stack([F.softmax(t(v), 1) for t in teachers]).mean(0)
        log_p = F.log_softmax(head(v), 1)
        loss = F.nll_loss(log_p, labels) + F.kl_div(log_p, teacher, reduction="batchmean")
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    new = {k: v.detach().numpy().astype(np.float32, copy=True) for k, v in head.state_dict().items()}
    return {"head.weight": new["weight"], "head.bias": new["bias"]}, float(np.mean(losses))
