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

    def forward(self, tensors: GraphTensors, intra: torch.Tensor, node_params: torch.Tensor) -> torch.Tensor:
        """intra: w^c (2m,); node_params: (n, 2p) angles of each node's part. -> scalar rho_hat."""
        ei = tensors.edge_index
        h_g = self.topology_encoder(tensors.x, ei, tensors.edge_attr).mean(dim=0)
        h_s = self.partition_encoder(tensors.x, ei, intra).mean(dim=0)
        angles = torch.cat([torch.sin(node_params), torch.cos(node_params)], dim=1)  # (n, 4p)
        h_p = self.angle_encoder(angles, ei, intra).mean(dim=0)
        return 0.5 + 0.5 * torch.sigmoid(self.head(torch.cat([h_g, h_s, h_p]))[0])


def frozen(critic: Critic) -> Critic:
    """An eval-mode copy of `critic` with no trainable parameters (the caller's critic is untouched);
    returned as is when it already is one."""
    if not critic.training and not any(q.requires_grad for q in critic.parameters()):
        return critic
    critic = copy.deepcopy(critic).eval()
    critic.requires_grad_(False)
    return critic


def train_critic(samples: list[tuple], *, width: int = 64, layers: int = 3, epochs: int = 100, batch: int = 32,
                 lr: float = 1e-3, weight_decay: float = 5e-4, seed: int = 0,
                 val_fraction: float = 0.2) -> tuple[Critic, list[dict]]:
    """Fit a Critic by MSE to realised rho. A sample is (GraphTensors, parts, params, rho).

    AdamW, grad-norm clip 1.0, ReduceLROnPlateau(0.5, 3) on the validation MSE, random
    (1 - val_fraction)/val_fraction split, best-validation checkpoint returned. Graphs differ in
    size, so a batch is a loop over its graphs and the loss is their mean. Deterministic for `seed`.
    """
    if not samples:
        raise ValueError("train_critic: samples is empty")
    if not 0 <= val_fraction < 1:
        raise ValueError(f"train_critic: val_fraction must be in [0, 1), got {val_fraction}")
    p = len(np.atleast_1d(samples[0][2][0][0]))
    data = [(t, *decision_inputs(t, parts, params), torch.tensor(float(rho))) for t, parts, params, rho in samples]
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(data))
    n_val = round(val_fraction * len(data)) if len(data) > 1 else 0
    n_val = min(max(n_val, 1 if val_fraction > 0 and len(data) > 1 else 0), len(data) - 1)
    val, train = [data[i] for i in order[:n_val]], [data[i] for i in order[n_val:]]

    def mse(model: Critic, items: list) -> torch.Tensor:
        return torch.stack([(model(t, wc, theta) - rho) ** 2 for t, wc, theta, rho in items]).mean()

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        critic = Critic(width, layers, p)
        opt = torch.optim.AdamW(critic.parameters(), lr=lr, weight_decay=weight_decay)
        sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=3)
        best, best_state, curve = np.inf, copy.deepcopy(critic.state_dict()), []
        for epoch in range(1, epochs + 1):
            critic.train()
            perm, losses = rng.permutation(len(train)), []
            for start in range(0, len(train), batch):
                loss = mse(critic, [train[i] for i in perm[start:start + batch]])
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(critic.parameters(), 1.0)
                opt.step()
                losses.append(loss.item())
            critic.eval()
            with torch.no_grad():
                val_mse = mse(critic, val).item() if val else float(np.mean(losses))
            sched.step(val_mse)
            curve.append({"epoch": epoch, "train_mse": float(np.mean(losses)), "val_mse": val_mse})
            if val_mse < best:
                best, best_state = val_mse, copy.deepcopy(critic.state_dict())
        critic.load_state_dict(best_state)
    return critic.eval(), curve
