"""The evaluator E_phi(G, S, P) -> rho_hat (spec §3.4, code `Critic_R`).

A learned GNN surrogate of the final QAOA^2 performance ratio of a level-0 decision: graph G,
partition S (as intra-part edge weights w^c) and per-part QAOA angles P (carried by every node).
It is not a quantum simulator; the generator is trained against it (generator.py).

The graph layers are written here in plain torch over edge-index lists (no torch-geometric):
`GATv2` follows PyG's GATv2Conv(heads=1, edge_dim=1, add_self_loops=True, fill_value="mean"),
`WeightedGCN` follows GCNConv(normalize=False, add_self_loops=False).
"""
from __future__ import annotations

import copy

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from tasks.quantum.features import N_FEATURES, GraphTensors

# ---------------------------------------------------------------- graph layers

def segment_softmax(scores: torch.Tensor, index: torch.Tensor, n: int) -> torch.Tensor:
    """Softmax of `scores` (E,) within each group of equal `index` (E,) in 0..n-1."""
    top = torch.full((n,), -torch.inf, dtype=scores.dtype).scatter_reduce(
        0, index, scores.detach(), reduce="amax", include_self=True)
    e = torch.exp(scores - top[index])
    return e / torch.zeros(n, dtype=scores.dtype).index_add(0, index, e)[index]


class GATv2(nn.Module):
    """Single-head GATv2 with a scalar edge attribute; every node also attends to itself through
    a self-loop whose attribute is the mean of its incoming attributes."""

    def __init__(self, d_in: int, d_out: int):
        super().__init__()
        self.lin_src = nn.Linear(d_in, d_out)
        self.lin_dst = nn.Linear(d_in, d_out)
        self.lin_edge = nn.Linear(1, d_out, bias=False)
        self.att = nn.Parameter(torch.empty(d_out))
        self.bias = nn.Parameter(torch.zeros(d_out))
        nn.init.uniform_(self.att, -(6 / (1 + d_out)) ** 0.5, (6 / (1 + d_out)) ** 0.5)

    def forward(self, h: torch.Tensor, edge_index: torch.Tensor, edge_attr: torch.Tensor) -> torch.Tensor:
        n = h.shape[0]
        src, dst = edge_index
        loops = torch.arange(n)
        in_count = torch.bincount(dst, minlength=n).clamp(min=1)
        loop_attr = torch.zeros(n, dtype=edge_attr.dtype).index_add(0, dst, edge_attr) / in_count
        src, dst = torch.cat([src, loops]), torch.cat([dst, loops])
        attr = torch.cat([edge_attr, loop_attr])[:, None]  # (E + n, 1)

        xs, xd = self.lin_src(h), self.lin_dst(h)  # (n, d_out)
        scores = F.leaky_relu(xs[src] + xd[dst] + self.lin_edge(attr), 0.2) @ self.att  # (E + n,)
        alpha = segment_softmax(scores, dst, n)
        return torch.zeros_like(xs).index_add(0, dst, alpha[:, None] * xs[src]) + self.bias


class WeightedGCN(nn.Module):
    """Unnormalised GCN layer without self-loops: h'_i = sum_j w_ij h_j W + b (w = 0 drops the edge)."""

    def __init__(self, d_in: int, d_out: int):
        super().__init__()
        self.lin = nn.Linear(d_in, d_out, bias=False)
        self.bias = nn.Parameter(torch.zeros(d_out))

    def forward(self, h: torch.Tensor, edge_index: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        src, dst = edge_index
        hw = self.lin(h)
        return torch.zeros_like(hw).index_add(0, dst, weight[:, None] * hw[src]) + self.bias


class GATEncoder(nn.Module):
    """MLP embedding (Linear-BN-ReLU-Linear-BN-ReLU) to `width`, then `layers` GATv2 layers, each
    followed by LayerNorm and a residual connection, ReLU after all but the last. -> (n, width)."""

    def __init__(self, d_in: int, width: int, layers: int):
        super().__init__()
        self.embed = nn.Sequential(nn.Linear(d_in, width), nn.BatchNorm1d(width), nn.ReLU(),
                                   nn.Linear(width, width), nn.BatchNorm1d(width), nn.ReLU())
        self.convs = nn.ModuleList(GATv2(width, width) for _ in range(layers))
        self.norms = nn.ModuleList(nn.LayerNorm(width) for _ in range(layers))

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor, edge_attr: torch.Tensor) -> torch.Tensor:
        h = self.embed(x)
        for i, (conv, norm) in enumerate(zip(self.convs, self.norms)):
            h = norm(conv(h, edge_index, edge_attr)) + h
            if i < len(self.convs) - 1:
                h = F.relu(h)
        return h


class GCNEncoder(nn.Module):
    """`layers` WeightedGCN layers with ReLU between them. -> (n, width)."""

    def __init__(self, d_in: int, width: int, layers: int):
        super().__init__()
        self.convs = nn.ModuleList(WeightedGCN(d_in if i == 0 else width, width) for i in range(layers))

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        h = x
        for i, conv in enumerate(self.convs):
            h = conv(h, edge_index, weight)
            if i < len(self.convs) - 1:
                h = F.relu(h)
        return h


# ---------------------------------------------------------------- the critic

def intra_weights(tensors: GraphTensors, parts_onehot: torch.Tensor) -> torch.Tensor:
    """w^c (2m,) = w̃_uv * sum_a S_ua S_va for each directed edge; S = parts_onehot (n, k)."""
    src, dst = tensors.edge_index
    return tensors.edge_attr * (parts_onehot[src] * parts_onehot[dst]).sum(dim=1)


def decision_inputs(tensors: GraphTensors, parts: list[np.ndarray],
                    params: list[tuple]) -> tuple[torch.Tensor, torch.Tensor]:
    """(w^c (2m,), node_params (n, 2p)) of a partition `parts` (node arrays) and per-part angles
    `params` [(gamma (p,), beta (p,)), ...]; each node carries [gamma..., beta...] of its part."""
    onehot = torch.zeros(tensors.n, len(parts))
    theta = torch.tensor(np.array([np.concatenate([np.atleast_1d(g), np.atleast_1d(b)]) for g, b in params]),
                         dtype=torch.float32)  # (k, 2p)
    for a, part in enumerate(parts):
        onehot[torch.as_tensor(np.asarray(part, dtype=np.int64)), a] = 1.0
    if not torch.all(onehot.sum(dim=1) == 1):
        raise ValueError("parts must be a disjoint cover of the graph's nodes")
    return intra_weights(tensors, onehot), onehot @ theta


class Critic(nn.Module):
    """rho_hat = 0.5 + 0.5 sigmoid(head([h_G, h_S, h_P])) in (0.5, 1)."""

    def __init__(self, width: int = 64, layers: int = 3, p: int = 1):
        super().__init__()
        self.config = {"width": width, "layers": layers, "p": p}
        self.topology_encoder = GATEncoder(N_FEATURES, width, layers)   # edge attribute w̃
        self.partition_encoder = GCNEncoder(N_FEATURES, width, 3)       # edge weight w^c
        self.angle_encoder = GATEncoder(4 * p, width, layers)  # [sin θ, cos θ], edge attribute w^c
        self.head = nn.Sequential(nn.Linear(3 * width, 256), nn.ReLU(), nn.Dropout(0.3), nn.Linear(256, 1))

    def logit(self, tensors: GraphTensors, intra: torch.Tensor, node_params: torch.Tensor) -> torch.Tensor:
        """The head's output before the squashing: a scalar that orders decisions as rho_hat does, without the
        sigmoid's flat tails (the ranking loss compares these)."""
        ei = tensors.edge_index
        h_g = self.topology_encoder(tensors.x, ei, tensors.edge_attr).mean(dim=0)
        h_s = self.partition_encoder(tensors.x, ei, intra).mean(dim=0)
        angles = torch.cat([torch.sin(node_params), torch.cos(node_params)], dim=1)  # (n, 4p)
        h_p = self.angle_encoder(angles, ei, intra).mean(dim=0)
        return self.head(torch.cat([h_g, h_s, h_p]))[0]

    def forward(self, tensors: GraphTensors, intra: torch.Tensor, node_params: torch.Tensor) -> torch.Tensor:
        """intra: w^c (2m,); node_params: (n, 2p) angles of each node's part. -> scalar rho_hat."""
        return 0.5 + 0.5 * torch.sigmoid(self.logit(tensors, intra, node_params))


def frozen(critic: Critic) -> Critic:
    """An eval-mode copy of `critic` with no trainable parameters (the caller's critic is untouched);
    returned as is when it already is one."""
    if not critic.training and not any(q.requires_grad for q in critic.parameters()):
        return critic
    critic = copy.deepcopy(critic).eval()
    critic.requires_grad_(False)
    return critic


def pairwise_ranking_loss(logits: torch.Tensor, rho: torch.Tensor) -> torch.Tensor:
    """RankNet loss of the decisions of one graph: over every pair whose realised rho differs, softplus of minus the
    logit difference in the order of rho, each pair weighted by |delta rho| (runs a shot or a coarse level apart are
    near-ties that say little about the partition). 0 when no pair differs."""
    i, j = torch.triu_indices(len(rho), len(rho), offset=1)
    delta = rho[i] - rho[j]
    weight = delta.abs()
    if weight.sum() == 0:
        return logits.sum() * 0.0  # keeps the graph connected for backward
    return (weight * F.softplus(-torch.sign(delta) * (logits[i] - logits[j]))).sum() / weight.sum()


def graph_groups(samples: list[tuple]) -> list[list[int]]:
    """Sample indices per graph, in first-seen order: the samples of one graph share its GraphTensors (as
    dataset.load_samples builds them)."""
    groups: dict[int, list[int]] = {}
    for index, sample in enumerate(samples):
        groups.setdefault(id(sample[0]), []).append(index)
    return list(groups.values())


def split_graphs(groups: list[list[int]], val_fraction: float,
                 rng: np.random.Generator) -> tuple[list[list[int]], list[list[int]]]:
    """(train, validation) graphs: a random val_fraction of the graphs (at least one where there are two or more and
    val_fraction > 0), so that validation measures ranking on graphs the critic has not seen."""
    order = rng.permutation(len(groups))
    n_val = min(max(round(val_fraction * len(groups)), 1 if val_fraction > 0 else 0), len(groups) - 1)
    return [groups[i] for i in order[n_val:]], [groups[i] for i in order[:n_val]]


def train_critic(samples: list[tuple], *, width: int = 64, layers: int = 3, epochs: int = 100, batch: int = 32,
                 lr: float = 1e-3, weight_decay: float = 5e-4, seed: int = 0,
                 val_fraction: float = 0.2) -> tuple[Critic, list[dict], list[list[int]]]:
    """Fit a Critic that ranks the decisions of one graph. A sample is (GraphTensors, parts, params, rho); the samples
    of one graph share its GraphTensors.

    Loss of a batch (up to `batch` samples of ONE graph): pairwise_ranking_loss on the logits plus the MSE of rho_hat
    to rho. The ranking term orders partitions within the graph, which is what the generator and the test-time
    adaptation use; the MSE term (the spec's loss) only places each graph's level, which the ranking term leaves
    free, keeping rho_hat a performance ratio in (0.5, 1) away from the sigmoid's flat tails where the generator's
    gradient would vanish. Validation on held-out GRAPHS (val_fraction of them): the same loss, and the mean
    within-graph Spearman of rho_hat. AdamW, grad-norm clip 1.0, ReduceLROnPlateau(0.5, 3) on the validation loss,
    best-validation checkpoint returned. Deterministic for `seed`.
    Returns (critic in eval mode, curve, validation graphs as sample-index lists)."""
    from tasks.quantum.ranking import mean_within_spearman

    if not samples:
        raise ValueError("train_critic: samples is empty")
    if not 0 <= val_fraction < 1:
        raise ValueError(f"train_critic: val_fraction must be in [0, 1), got {val_fraction}")
    p = len(np.atleast_1d(samples[0][2][0][0]))
    data = [(t, *decision_inputs(t, parts, params), torch.tensor(float(rho))) for t, parts, params, rho in samples]
    rng = np.random.default_rng(seed)
    train, val = split_graphs(graph_groups(samples), val_fraction, rng)

    def loss_of(model: Critic, indices: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
        """(the batch's loss, its rho_hat) for the samples `indices` of one graph."""
        logits = torch.stack([model.logit(*data[i][:3]) for i in indices])
        rho = torch.stack([data[i][3] for i in indices])
        rho_hat = 0.5 + 0.5 * torch.sigmoid(logits)
        return pairwise_ranking_loss(logits, rho) + ((rho_hat - rho) ** 2).mean(), rho_hat

    def validate(model: Critic) -> tuple[float, float]:
        """(mean loss over the validation graphs, their mean within-graph Spearman)."""
        with torch.no_grad():
            losses, scores = zip(*(loss_of(model, group) for group in val))
        rho = [data[i][3].item() for group in val for i in group]
        graphs = [k for k, group in enumerate(val) for _ in group]
        return float(np.mean([loss.item() for loss in losses])), mean_within_spearman(torch.cat(scores).tolist(), rho, graphs)

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        critic = Critic(width, layers, p)
        opt = torch.optim.AdamW(critic.parameters(), lr=lr, weight_decay=weight_decay)
        sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=3)
        best, best_state, curve = np.inf, copy.deepcopy(critic.state_dict()), []
        for epoch in range(1, epochs + 1):
            critic.train()
            losses = []
            for chunk in graph_batches(train, batch, rng):
                loss, _ = loss_of(critic, chunk)
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(critic.parameters(), 1.0)
                opt.step()
                losses.append(loss.item())
            critic.eval()
            val_loss, val_spearman = validate(critic) if val else (float(np.mean(losses)), float("nan"))
            sched.step(val_loss)
            curve.append({"epoch": epoch, "train_loss": float(np.mean(losses)), "val_loss": val_loss,
                          "val_within_spearman": val_spearman})
            if val_loss < best:
                best, best_state = val_loss, copy.deepcopy(critic.state_dict())
        critic.load_state_dict(best_state)
    return critic.eval(), curve, val


def graph_batches(groups: list[list[int]], batch: int, rng: np.random.Generator) -> list[list[int]]:
    """One epoch's batches: each graph's samples shuffled and cut into chunks of up to `batch`, the chunks of all
    graphs in random order (a chunk holds one graph, so its pairs are pairs of one graph)."""
    shuffled = [[int(i) for i in rng.permutation(group)] for group in groups]
    chunks = [group[start:start + batch] for group in shuffled for start in range(0, len(group), batch)]
    return [chunks[i] for i in rng.permutation(len(chunks))]


def validation_ranking(critic: Critic, samples: list[tuple], groups: list[list[int]]) -> dict[str, float]:
    """Mean within-graph Spearman with realised rho over the graphs `groups` (sample-index lists: train_critic's
    validation graphs) of the critic's rho_hat and of the intra-part |w| share, the training-free feature it must
    beat to be worth maximising."""
    from tasks.quantum.ranking import mean_within_spearman

    critic, scores = frozen(critic), {"critic": [], "intra_share": []}
    indices = [i for group in groups for i in group]
    with torch.no_grad():
        for i in indices:
            tensors, parts, params, _ = samples[i]
            intra, node_params = decision_inputs(tensors, parts, params)
            scores["critic"].append(critic(tensors, intra, node_params).item())
            scores["intra_share"].append((intra.abs().sum() / tensors.edge_attr.abs().sum().clamp(min=1e-12)).item())
    rho = [samples[i][3] for i in indices]
    graphs = [k for k, group in enumerate(groups) for _ in group]
    return {name: mean_within_spearman(values, rho, graphs) for name, values in scores.items()}
