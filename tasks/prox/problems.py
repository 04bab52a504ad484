"""Composite problems F(x) = f(x) + g(x) with unbiased stochastic gradients of f, batched over B runs.

- NetworkLasso (graph-guided multi-task least squares): nodes i with data X_i (r, p), y_i (r,),
  F(x) = sum_i 1/2 ||X_i x_i - y_i||^2 + lam sum_{(i,j) in E} ||x_i - x_j||_2; g is a sum of m edge terms, each with
  an easy prox, so the randomized incremental proximal method (RIP) takes one random edge per step with weight m lam.
  The stochastic gradient draws one row per node, scaled by r (unbiased for the sum).
- Lasso: F(x) = 1/(2n) ||X x - y||^2 + lam ||x||_1 (scikit-learn's scaling); one sample per step.
`smoothness` is the largest per-sample smoothness constant of the stochastic gradient actually used (its scale
included), the L-hat of the horizon-dependent step.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .maps import edge_prox_l2, l1_prox


@dataclass
class NetworkLasso:
    X: torch.Tensor  # (N, r, p)
    y: torch.Tensor  # (N, r)
    edges: torch.Tensor  # (m, 2) long
    lam: float

    @property
    def shape(self) -> tuple[int, int]:
        return self.X.shape[0], self.X.shape[2]

    @property
    def smoothness(self) -> float:
        return float(self.X.shape[1] * (self.X ** 2).sum(-1).max())

    def value(self, x: torch.Tensor) -> torch.Tensor:
        """F for each of B runs, x (B, N, p)."""
        residual = torch.einsum("nrp,bnp->bnr", self.X, x) - self.y
        differences = x[:, self.edges[:, 0]] - x[:, self.edges[:, 1]]
        return 0.5 * (residual ** 2).sum((1, 2)) + self.lam * torch.linalg.vector_norm(differences, dim=-1).sum(1)

    def stochastic_gradient(self, x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        B, (N, r, _) = x.shape[0], self.X.shape
        rows = torch.randint(r, (B, N), generator=generator)
        a = self.X[torch.arange(N), rows]  # (B, N, p)
        return r * ((a * x).sum(-1) - self.y[torch.arange(N), rows])[..., None] * a

    def prox_step(self, x: torch.Tensor, gamma: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        """RIP: the prox of gamma m lam ||x_i - x_j|| on one uniformly drawn edge per run."""
        B, m = x.shape[0], len(self.edges)
        pick = self.edges[torch.randint(m, (B,), generator=generator)]
        runs = torch.arange(B)
        u, v = edge_prox_l2(x[runs, pick[:, 0]], x[runs, pick[:, 1]], gamma * m * self.lam)
        x = x.clone()
        x[runs, pick[:, 0]], x[runs, pick[:, 1]] = u, v
        return x

    def zeros(self, B: int) -> torch.Tensor:
        return torch.zeros(B, *self.shape, dtype=self.X.dtype)


@dataclass
class Lasso:
    X: torch.Tensor  # (n, d)
    y: torch.Tensor  # (n,)
    lam: float

    @property
    def smoothness(self) -> float:
        return float((self.X ** 2).sum(1).max())

    def value(self, x: torch.Tensor) -> torch.Tensor:
        """F for each of B runs, x (B, d)."""
        return 0.5 * ((x @ self.X.T - self.y) ** 2).mean(1) + self.lam * x.abs().sum(1)

    def stochastic_gradient(self, x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        rows = torch.randint(len(self.y), (x.shape[0],), generator=generator)
        a = self.X[rows]  # (B, d)
        return ((a * x).sum(1) - self.y[rows])[:, None] * a

    def prox_step(self, x: torch.Tensor, gamma: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        """Prox-SGD: the exact prox of gamma lam ||.||_1."""
        return l1_prox(x, gamma * self.lam)

    def zeros(self, B: int) -> torch.Tensor:
        return torch.zeros(B, self.X.shape[1], dtype=self.X.dtype)


def network_lasso_data(group_sizes: tuple[int, ...], features: int, rows: int, rng: np.random.Generator,
                       p_in: float = 0.5, p_out: float = 0.01, noise: float = 0.01) -> dict[str, np.ndarray]:
    """The BlockProx companion generator: nodes in groups, features ~ N(0, 1) plus a bias column of ones, one
    parameter vector ~ N(0, I) per group, y = X w_group + noise * N(0, 1); an edge inside a group with probability
    p_in and across groups with p_out."""
    group = np.repeat(np.arange(len(group_sizes)), group_sizes)
    N, p = len(group), features + 1
    X = np.concatenate([rng.standard_normal((N, rows, features)), np.ones((N, rows, 1))], axis=2)
    w = rng.standard_normal((len(group_sizes), p))
    y = np.einsum("nrp,np->nr", X, w[group]) + noise * rng.standard_normal((N, rows))
    i, j = np.triu_indices(N, 1)
    chance = np.where(group[i] == group[j], p_in, p_out)
    keep = rng.random(len(i)) < chance
    return {"X": X, "y": y, "edges": np.stack([i[keep], j[keep]], 1), "group": group, "w": w}
