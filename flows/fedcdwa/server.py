"""FedCDWA's server side (spec §3.2, §3.4), a pure function of the clients' replies: FedAvg of the global branches,
then HWA of their class statistics (hwa.py), then server-side mutual distillation of the global head on virtual
features drawn from the aggregated statistics.

Two choices of ours on the server step (the spec leaves both open): a client head teaches a class in proportion to
its count of the class (a head that never saw the class does not teach it: the plain mean over heads cost single
rounds up to 9 points), and the step is kept only if it does not lower accuracy on the validation splits the
round's clients hold (spec §11: never decide on the test set; the spec's intent is a mild step that never hurts)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from tasks.core.seeding import derive_seed
from tasks.federated.averaging import weighted_average
from tasks.federated.messages import Message, weights_in
from tasks.federated.method import ServerState

from . import hwa
from .config import FedConfig


@dataclass(frozen=True)
class CDWAState(ServerState):
    stats: hwa.GlobalStatistics = field(kw_only=True)  # full precision, with the support S_c clients never see


Weights = dict[str, np.ndarray]


def aggregate(cfg: FedConfig, replies: list[Message], *, seed: int, round_: int,
              score: Callable[[Weights], float] | None = None,
              validate: Callable[[list[Weights]], list[float] | None] | None = None) -> tuple[CDWAState, dict]:
    """(next state, diagnostics). `score` (optional) rates a weights dict on the server's test set, to log the
    accuracy before the server step (a diagnostic, never a decision); `validate` rates candidates on the clients'
    validation splits, which decide whether the server step is kept (cfg.gate_server_step)."""
    weights = weighted_average([weights_in(r) for r in replies], [int(r["n"]) for r in replies])
    stats = hwa.aggregate(*(np.stack([r[key] for r in replies]) for key in ("counts", "protos", "stds", "sub", "mass")),
                          n_support=cfg.support, rng=np.random.default_rng(derive_seed(seed, "barycenter", round_)),
                          iterations=cfg.barycenter_iterations)
    info = {"inter_class_ratio": hwa.inter_class_ratio(stats), "pvda": float(np.mean([r["pvda"] for r in replies]))}
    if cfg.server_steps > 0:
        if score is not None:
            info["global_accuracy_before_server_step"] = score(weights)
        generator = torch.Generator().manual_seed(derive_seed(seed, "server", round_))
        counts = np.stack([r["counts"] for r in replies])
        head, info["server_loss"] = distil_head(cfg, weights, [weights_in(r) for r in replies], counts, stats,
                                                generator)
        kept, checks = keep_server_step(cfg, weights, weights | head, validate)
        info |= checks
        weights = weights | head if kept else weights
    shared = {"mu": stats.mu.astype(np.float32), "sigma": stats.sigma.astype(np.float32), "known": stats.known}
    return CDWAState(weights, shared, stats=stats), info


def keep_server_step(cfg: FedConfig, before: Weights, after: Weights,
                     validate: Callable[[list[Weights]], list[float] | None] | None) -> tuple[bool, dict]:
    """(keep the step?, diagnostics): kept when its validation accuracy is at least the accuracy without it; kept
    unchecked when the gate is off or no client of the round holds a validation split."""
    found = validate([before, after]) if cfg.gate_server_step and validate is not None else None
    kept = found is None or found[1] >= found[0]
    before_step, after_step = (float("nan"), float("nan")) if found is None else found  # NaN: not checked this round
    return kept, {"server_step_kept": float(kept), "validation_accuracy_before_server_step": before_step,
                  "validation_accuracy_after_server_step": after_step}


def teacher_weights(counts: np.ndarray, classes: np.ndarray) -> torch.Tensor:
    """[K, len(classes)]: client k's weight as a teacher of each known class, n_kc / sum_k n_kc (0 for a client
    that never saw the class)."""
    chosen = counts[:, classes].astype(np.float64)
    return torch.from_numpy((chosen / chosen.sum(0, keepdims=True)).astype(np.float32))


def _linear(weight: np.ndarray, bias: np.ndarray) -> nn.Linear:
    layer = nn.Linear(weight.shape[1], weight.shape[0])
    layer.load_state_dict({"weight": torch.from_numpy(weight.copy()), "bias": torch.from_numpy(bias.copy())})
    return layer


def distil_head(cfg: FedConfig, weights: Weights, clients: list[Weights], counts: np.ndarray,
                stats: hwa.GlobalStatistics, generator: torch.Generator) -> tuple[Weights, float]:
    """I_s SGD steps on the global head h_G only: per known class c, B virtual features v = S_c[j] + kappa sigma_c xi
    (j uniform over the support, xi ~ N(0, I)); loss CE(h_G(v), c) + KL(sum_k pi_kc softmax(h_k(v)) || softmax(h_G(v))),
    the client heads teaching the aggregated head, each in proportion to its count of the class (counts [K, C]).
    Mild by design (§3.4: aggressive settings collapsed)."""
    head = _linear(weights["head.weight"], weights["head.bias"])
    teachers = [_linear(w["head.weight"], w["head.bias"]) for w in clients]
    opt = torch.optim.SGD(head.parameters(), lr=cfg.server_lr, momentum=cfg.server_momentum)
    classes = np.flatnonzero(stats.known)
    support = torch.from_numpy(stats.support.astype(np.float32))
    sigma = torch.from_numpy(stats.sigma.astype(np.float32))
    labels = torch.from_numpy(np.repeat(classes, cfg.server_batch).astype(np.int64))
    per_row = teacher_weights(counts, classes).repeat_interleave(cfg.server_batch, dim=1)  # [K, rows]
    losses = []
    for _ in range(cfg.server_steps):
        v = torch.cat([support[c][torch.randint(int(stats.support_n[c]), (cfg.server_batch,), generator=generator)]
                       + cfg.kappa * sigma[c] * torch.randn(cfg.server_batch, sigma.shape[1], generator=generator)
                       for c in classes])
        with torch.no_grad():
            teacher = torch.einsum("kn,knc->nc", per_row, torch.stack([F.softmax(t(v), 1) for t in teachers]))
        log_p = F.log_softmax(head(v), 1)
        loss = F.nll_loss(log_p, labels) + F.kl_div(log_p, teacher, reduction="batchmean")
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    new = {k: v.detach().numpy().astype(np.float32, copy=True) for k, v in head.state_dict().items()}
    return {"head.weight": new["weight"], "head.bias": new["bias"]}, float(np.mean(losses))
