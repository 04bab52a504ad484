"""The joint generator G_psi(G) -> (S, P) and the neural QAOA^2 policy (spec §3.5).

Partition first, then parameters:
  node embeddings H (GAT encoder) -> Orthogonal Complement Head -> S_soft (n, k)
  -> Greedy Capacity Discretisation -> S_hard (one-hot, parts <= n_max)
  -> straight-through S = S_hard + S_soft - stopgrad(S_soft) -> w^c = w̃ * (S S^T)_uv
  -> parameter head on detached w^c -> theta (k, 2p) in [0, 2pi), ordered [gamma..., beta...].
The generator is trained (and adapted at test time) to maximise the frozen critic's rho_hat.
"""
from __future__ import annotations

import copy
import math
import pickle
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from tasks.core.inputs import InputError, check_readable
from tasks.quantum.critic import Critic, GATEncoder, GCNEncoder, frozen, intra_weights
from tasks.quantum.features import N_FEATURES, GraphTensors, to_tensors
from tasks.quantum.graph import WeightedGraph

TWO_PI = 2 * math.pi


class OrthogonalComplementHead(nn.Module):
    """k cluster queries orthonormal to each other and to the global direction g of the graph.

    A fixed Gaussian A (width x width) is drawn once (a buffer, not trained); Q = basis vectors
    2..k+1 of the QR decomposition of [g; A_1..A_k]^T. S_soft = softmax_rows(Ĥ Q^T / tau)."""

    def __init__(self, width: int, tau: float = 0.05):
        super().__init__()
        self.tau = tau
        self.register_buffer("basis", torch.randn(width, width))

    def queries(self, h_hat: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
        """(Q (k, width), g (width,)) for row-normalised embeddings h_hat (n, width)."""
        width = self.basis.shape[0]
        if not 1 <= k < width:
            raise ValueError(f"OrthogonalComplementHead: k must be in [1, {width - 1}] (width {width}), got {k}")
        g = F.normalize(h_hat.mean(dim=0), dim=0)
        q, _ = torch.linalg.qr(torch.cat([g[None], self.basis[:k]]).T)  # (width, k + 1), column 0 = ±g
        return q[:, 1:].T, g

    def forward(self, h: torch.Tensor, k: int) -> torch.Tensor:
        h_hat = F.normalize(h, dim=1)
        q, _ = self.queries(h_hat, k)
        return torch.softmax(h_hat @ q.T / self.tau, dim=1)  # (n, k)


@torch.no_grad()
def greedy_capacity_discretisation(s_soft: torch.Tensor, n_max: int) -> torch.Tensor:
    """One-hot S_hard (n, k) with at most n_max nodes per cluster, no gradient.

    For preference rank r = 0..k-1 and cluster j, the unassigned nodes whose r-th preference is j
    are accepted best score first, up to j's remaining capacity. Every node ends up assigned
    when k * n_max >= n: a node left over would have found all k clusters full. When argmax is
    already feasible, rank 0 accepts it unchanged."""
    n, k = s_soft.shape
    if k * n_max < n:
        raise ValueError(f"greedy_capacity_discretisation: k * n_max = {k} * {n_max} < n = {n}")
    scores = s_soft.detach().cpu().numpy()
    prefs = np.argsort(-scores, axis=1, kind="stable")  # (n, k), column r = r-th preference
    assign, capacity = np.full(n, -1), np.full(k, n_max)
    for r in range(k):
        for j in range(k):
            candidates = np.flatnonzero((assign < 0) & (prefs[:, r] == j))
            if candidates.size == 0 or capacity[j] == 0:
                continue
            take = candidates[np.argsort(-scores[candidates, j], kind="stable")[:capacity[j]]]
            assign[take] = j
            capacity[j] -= take.size
    assert (assign >= 0).all()
    return F.one_hot(torch.as_tensor(assign), k).to(s_soft.dtype)


def straight_through(s_hard: torch.Tensor, s_soft: torch.Tensor) -> torch.Tensor:
    """Forward value S_hard, gradient of S_soft."""
    return s_hard + (s_soft - s_soft.detach())  # exactly S_hard forward: the bracket is 0


def angles_from_vectors(v: torch.Tensor) -> torch.Tensor:
    """(..., 2) vectors -> angles atan2(y, x) mod 2pi in [0, 2pi) after normalising to unit length."""
    v = F.normalize(v, dim=-1)
    theta = torch.remainder(torch.atan2(v[..., 1], v[..., 0]), TWO_PI)
    return torch.where(theta >= TWO_PI, theta - TWO_PI, theta)  # float rounding can give exactly 2pi


class ParameterHead(nn.Module):
    """2-layer unnormalised GCN on node features (edge weights: detached w^c), mean-pool per part,
    MLP width -> width -> ReLU -> 2*(2p); each pair becomes one angle. -> theta (k, 2p)."""

    def __init__(self, width: int, p: int):
        super().__init__()
        self.p = p
        self.gcn = GCNEncoder(N_FEATURES, width, 2)
        self.mlp = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 4 * p))

    def forward(self, tensors: GraphTensors, intra: torch.Tensor, s_hard: torch.Tensor) -> torch.Tensor:
        h = self.gcn(tensors.x, tensors.edge_index, intra.detach())  # (n, width)
        pooled = (s_hard.T @ h) / s_hard.sum(dim=0).clamp(min=1)[:, None]  # (k, width)
        return angles_from_vectors(self.mlp(pooled).view(-1, 2 * self.p, 2))  # (k, 2p)


class JointGenerator(nn.Module):
    def __init__(self, width: int = 128, layers: int = 2, p: int = 1, tau: float = 0.05):
        super().__init__()
        self.config = {"width": width, "layers": layers, "p": p, "tau": tau}
        self.encoder = GATEncoder(N_FEATURES, width, layers)
        self.och = OrthogonalComplementHead(width, tau)
        self.param_head = ParameterHead(width, p)

    def forward(self, tensors: GraphTensors, k: int, n_max: int):
        """-> S_hard (n, k), S (n, k) straight-through, w^c (2m,), theta (k, 2p)."""
        h = self.encoder(tensors.x, tensors.edge_index, tensors.edge_attr)  # (n, width)
        s_soft = self.och(h, k)
        s_hard = greedy_capacity_discretisation(s_soft, n_max)
        s = straight_through(s_hard, s_soft)
        intra = intra_weights(tensors, s)
        return s_hard, s, intra, self.param_head(tensors, intra, s_hard)


def critic_score(critic: Critic, tensors: GraphTensors, s_hard: torch.Tensor, intra: torch.Tensor,
                 theta: torch.Tensor) -> torch.Tensor:
    """rho_hat of a generator output; every node carries its part's angles."""
    return critic(tensors, intra, theta[s_hard.argmax(dim=1)])


SCORERS = ("critic", "intra_share")  # what the generator maximises (train_critic's validation picks one)


def intra_share_score(tensors: GraphTensors, s: torch.Tensor) -> torch.Tensor:
    """The share of |w| on edges inside parts (partition.intra_weight_share), differentiable in the
    straight-through S (n, k): its value is that of S_hard, its gradient reaches S_soft."""
    src, dst = tensors.edge_index
    absw = tensors.edge_attr.abs()
    return (absw * (s[src] * s[dst]).sum(dim=1)).sum() / absw.sum().clamp(min=1e-12)


def decision_score(critic: Critic, scorer: str, tensors: GraphTensors, s_hard: torch.Tensor, s: torch.Tensor,
                   intra: torch.Tensor, theta: torch.Tensor) -> torch.Tensor:
    """What the generator maximises for one decision. 'critic': rho_hat (the paper). 'intra_share': the share of |w|
    inside parts for the partition, plus rho_hat with the partition held fixed (detached) for the angles, which the
    share does not score; used where the share ranks partitions better than the critic (issue 42)."""
    if scorer == "critic":
        return critic_score(critic, tensors, s_hard, intra, theta)
    if scorer == "intra_share":
        return intra_share_score(tensors, s) + critic_score(critic, tensors, s_hard, intra.detach(), theta)
    raise ValueError(f"scorer must be one of {SCORERS}, got {scorer!r}")


def n_parts(n: int, n_max: int) -> int:
    """k = ceil(n / n_max) (1 when n <= n_max)."""
    return max(1, math.ceil(n / n_max))


def train_generator(critic: Critic, graphs: list[GraphTensors], *, n_max: int, width: int = 128, layers: int = 2,
                    epochs: int = 1500, batch: int = 16, lr: float = 4e-3, weight_decay: float = 5e-4,
                    seed: int = 0, val_fraction: float = 0.1, scorer: str = "critic") -> tuple[JointGenerator, list[dict]]:
    """Maximise the mean `scorer` score (decision_score: the frozen critic's rho_hat for 'critic');
    loss = -mean score over a batch of graphs, k = ceil(n/n_max).

    AdamW, random (1 - val_fraction)/val_fraction split, ReduceLROnPlateau(0.8, 100) on the mean of
    train and validation loss, best checkpoint by that mean (the untrained one included). Scores are
    taken in train mode, as at inference (BatchNorm on each graph's own statistics). Curve: one dict
    {epoch, train_score, val_score} per epoch, epoch 0 before training. Deterministic for `seed`."""
    if not graphs:
        raise ValueError("train_generator: graphs is empty")
    if n_max < 1:
        raise ValueError(f"train_generator: n_max must be >= 1, got {n_max}")
    critic = frozen(critic)
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(graphs))
    n_val = min(round(val_fraction * len(graphs)), len(graphs) - 1)
    val, train = [graphs[i] for i in order[:n_val]], [graphs[i] for i in order[n_val:]]

    def mean_score(gen: JointGenerator, items: list[GraphTensors]) -> torch.Tensor:
        return torch.stack([decision_score(critic, scorer, t, *_decide(gen, t, n_max)) for t in items]).mean()

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        gen = JointGenerator(width, layers, critic.config["p"])
        opt = torch.optim.AdamW(gen.parameters(), lr=lr, weight_decay=weight_decay)
        sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.8, patience=100)
        gen.train()
        with torch.no_grad():
            train_score = mean_score(gen, train).item()
            val_score = mean_score(gen, val).item() if val else train_score
        curve = [{"epoch": 0, "train_score": train_score, "val_score": val_score}]
        best, best_state = -(train_score + val_score) / 2, copy.deepcopy(gen.state_dict())
        for epoch in range(1, epochs + 1):
            perm, scores = rng.permutation(len(train)), []
            for start in range(0, len(train), batch):
                score = mean_score(gen, [train[i] for i in perm[start:start + batch]])
                opt.zero_grad()
                (-score).backward()
                opt.step()
                scores.append(score.item())
            train_score = float(np.mean(scores))
            with torch.no_grad():
                val_score = mean_score(gen, val).item() if val else train_score
            monitored = -(train_score + val_score) / 2
            sched.step(monitored)
            curve.append({"epoch": epoch, "train_score": train_score, "val_score": val_score})
            if monitored < best:
                best, best_state = monitored, copy.deepcopy(gen.state_dict())
        gen.load_state_dict(best_state)
    return gen, curve


def _decide(gen: JointGenerator, tensors: GraphTensors, n_max: int):
    """(S_hard, S, w^c, theta) of `gen` on one graph with k = ceil(n / n_max)."""
    return gen(tensors, n_parts(tensors.n, n_max), n_max)


def test_time_adapt(generator: JointGenerator, critic: Critic, tensors: GraphTensors, k: int, n_max: int, *,
                    steps: int = 64, lr: float = 1e-3, weight_decay: float = 5e-4, min_lr: float = 1e-4,
                    scorer: str = "critic") -> tuple[list[np.ndarray], list[tuple[np.ndarray, np.ndarray]]]:
    """Adapt a fresh copy of `generator` to one graph and return its best decision.

    The copy runs in train mode (BatchNorm on this graph's statistics; eval mode for a single
    node), takes up to `steps` AdamW steps on -score (decision_score of `scorer`) with ReduceLROnPlateau(0.8, 100),
    stopping once the lr falls below `min_lr`, and the (S_hard, theta) with the best score seen,
    the unadapted one included, is returned as parts [node array per part, sorted] and params
    [(gamma (p,), beta (p,)) per part]."""
    critic = frozen(critic)
    gen = copy.deepcopy(generator).train(tensors.n > 1)
    opt = torch.optim.AdamW(gen.parameters(), lr=lr, weight_decay=weight_decay)
    sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.8, patience=100)
    best_score, best = -math.inf, None
    for step in range(steps + 1):
        s_hard, s, intra, theta = gen(tensors, k, n_max)
        score = decision_score(critic, scorer, tensors, s_hard, s, intra, theta)
        if score.item() > best_score:
            best_score, best = score.item(), (s_hard.argmax(dim=1).numpy(), theta.detach().double().numpy())
        if step == steps or opt.param_groups[0]["lr"] < min_lr:
            break
        opt.zero_grad()
        (-score).backward()
        opt.step()
        sched.step(-score.item())
    assign, theta = best
    p = theta.shape[1] // 2
    parts = [np.flatnonzero(assign == a) for a in range(k)]
    return parts, [(theta[a, :p].copy(), theta[a, p:].copy()) for a in range(k)]


test_time_adapt.__test__ = False  # not a pytest test, despite the name


def neural_policy(generator: JointGenerator, critic: Critic, *, steps: int = 64, scorer: str = "critic") -> Callable:
    """The QAOA^2 partition-and-initialisation policy: policy(graph, n_max, rng, level) -> (parts, params),
    with k = ceil(n / n_max) parts (1 when n <= n_max) from `steps` of test-time adaptation on that
    graph against `scorer`. Deterministic, so `rng` and `level` are unused."""
    critic = frozen(critic)

    def policy(graph: WeightedGraph, n_max: int, rng=None, level: int = 0):
        return test_time_adapt(generator, critic, to_tensors(graph), n_parts(graph.n, n_max), n_max, steps=steps,
                               scorer=scorer)

    return policy


# 2 (issue 42): a critic trained to rank within graphs, and the run config names the generator's scorer.
# Files without a format (1) hold an MSE-only critic and no scorer: refused, not guessed at.
NETWORKS_FORMAT = 2


def save_networks(path: str | Path, critic: Critic, generator: JointGenerator, config: dict) -> None:
    """One file with both networks (config + state) and a plain-typed run `config` that names the generator's
    `scorer` (one of SCORERS)."""
    if config.get("scorer") not in SCORERS:
        raise ValueError(f"save_networks: config['scorer'] must be one of {SCORERS}, got {config.get('scorer')!r}")
    torch.save({"format": NETWORKS_FORMAT, "critic": {"config": critic.config, "state": critic.state_dict()},
                "generator": {"config": generator.config, "state": generator.state_dict()},
                "config": config}, path)


MAX_NETWORK_SIZE = 4096  # any width, layer or angle count in a networks file: refused above it, before building


def load_networks(path: str | Path) -> tuple[Critic, JointGenerator, dict]:
    """(critic in eval mode, generator, config) as saved by `save_networks`. InputError, naming the
    file, when it is not such a file: not a torch file, another kind of model, or sizes that do not
    match the saved weights."""
    path = check_readable(path, "networks file")
    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)  # load_state_dict copies onto CPU anyway
    except (pickle.UnpicklingError, EOFError, RuntimeError, ValueError, KeyError, IndexError, TypeError):
        raise InputError(f"networks file {path}: not a file written by torch.save (expected the QAOA^2 networks "
                         "that save_networks writes)") from None
    parts = ("critic", "generator", "config")
    if not (isinstance(blob, dict) and all(isinstance(blob.get(key), dict) for key in parts)
            and all(isinstance(blob[key].get("config"), dict) and isinstance(blob[key].get("state"), dict)
                    for key in parts[:2])):
        keys = ", ".join(map(str, blob)) if isinstance(blob, dict) else type(blob).__name__
        raise InputError(f"networks file {path}: a torch file of another kind (holds {keys[:120]}), expected the "
                         "critic and generator that save_networks writes")
    version = blob.get("format", 1)
    if version != NETWORKS_FORMAT or blob["config"].get("scorer") not in SCORERS:
        raise InputError(f"networks file {path}: format {str(version)[:20]}, written before the critic was trained to "
                         f"rank within graphs; this code reads format {NETWORKS_FORMAT}: retrain it (the paper's train "
                         "stage)")
    networks = []
    for key, kind in (("critic", Critic), ("generator", JointGenerator)):
        config = blob[key]["config"]
        sizes = [v for v in config.values() if isinstance(v, int)]
        if any(v < 1 or v > MAX_NETWORK_SIZE for v in sizes):
            raise InputError(f"networks file {path}: {key} config {config} has a size outside 1..{MAX_NETWORK_SIZE}")
        try:
            network = kind(**config)
            network.load_state_dict(blob[key]["state"])
        except (TypeError, ValueError, RuntimeError, KeyError, AttributeError) as error:
            detail = str(error).strip().splitlines()[0][:160] if str(error).strip() else type(error).__name__
            raise InputError(f"networks file {path}: its {key} does not match this code's {kind.__name__} "
                             f"({detail})") from None
        networks.append(network)
    critic, generator = networks
    return critic.eval(), generator, blob["config"]


def policy_from_networks(path: Path, tta_steps: int, serves: tuple[int, int] | None = None):
    """The Neural policy of trained networks (angles as plain floats for the QAOA solver). `serves` (nodes, n_max):
    InputError, before any work, when the generator's head cannot place that many parts (k < width)."""
    critic, generator, config = load_networks(path)
    if serves is not None:
        nodes, n_max = serves
        parts, width = n_parts(nodes, n_max), generator.config["width"]
        if parts >= width:
            raise InputError(f"networks file {path}: its generator (width {width}) places at most {width - 1} parts, "
                             f"and {nodes} nodes at --n-max {n_max} need {parts}; use --n-max "
                             f"{math.ceil(nodes / (width - 1))} or more, or networks trained wider")
    adapt = neural_policy(generator, critic, steps=tta_steps, scorer=config["scorer"])

    def policy(graph, n_max, rng, level):
        parts, params = adapt(graph, n_max, rng, level)
        return parts, [(float(np.ravel(g)[0]), float(np.ravel(b)[0])) for g, b in params]

    return policy
