"""LES, the Learned Evolution Strategy (Lange et al., ICLR 2023) as the released MetaDistill code uses it.

A diagonal Gaussian ES whose recombination weights come from self-attention over per-member fitness tokens and whose
per-dimension learning rates of mean and scale come from a small MLP over evolution paths and a time embedding.
Sampling is reparameterised (x = m + sigma * eps), so a new population is differentiable in the parameters; the
population is detached between generations by the callers (one-generation truncated backprop).
Sizes: attention dim 8, MLP dim 8 (the sizes the released class actually reads).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

PATH_RATES = (0.1, 0.5, 0.9)  # the EMA rates of the evolution paths: three timescales
TIME_SCALES = (1.0, 3.0, 10.0, 30.0, 50.0, 100.0, 250.0, 500.0)  # tanh(t / scale) time embedding
SIGMA_MIN = 1e-12


@dataclass
class LESState:
    m: torch.Tensor  # (d,)
    sigma: torch.Tensor  # (d,)
    path_c: torch.Tensor  # (3, d): EMAs of sum_i w_i (x_i - m)
    path_sigma: torch.Tensor  # (3, d): EMAs of sum_i w_i (x_i - m) / sigma
    best: float  # best fitness so far
    t: int  # generations done

    def detach(self) -> "LESState":
        return LESState(self.m.detach(), self.sigma.detach(), self.path_c.detach(), self.path_sigma.detach(),
                        self.best, self.t)


def fitness_tokens(f: torch.Tensor, best: float) -> torch.Tensor:
    """(N, 3): z-score of f clipped to +-5, centred rank in [-0.5, 0.5] (best = -0.5), 1 if better than the best
    so far."""
    z = ((f - f.mean()) / (f.std(unbiased=False) + 1e-12)).clamp(-5, 5)
    ranks = torch.argsort(torch.argsort(f)).to(f.dtype)
    centred = ranks / max(len(f) - 1, 1) - 0.5
    return torch.stack([z, centred, (f < best).to(f.dtype)], dim=1)


class LES(nn.Module):
    def __init__(self, att_dim: int = 8, mlp_dim: int = 8, sigma_init: float = 0.3):
        super().__init__()
        self.query, self.key, self.value = nn.Linear(3, att_dim), nn.Linear(3, att_dim), nn.Linear(3, 1)
        self.lrate = nn.Sequential(nn.Linear(2 * len(PATH_RATES) + len(TIME_SCALES), mlp_dim), nn.Tanh(),
                                   nn.Linear(mlp_dim, 2))
        self.config = {"att_dim": att_dim, "mlp_dim": mlp_dim, "sigma_init": sigma_init}
        self.sigma_init = sigma_init
        self.register_buffer("rates", torch.tensor(PATH_RATES).unsqueeze(1), persistent=False)
        self.register_buffer("scales", torch.tensor(TIME_SCALES), persistent=False)

    def initial_state(self, lower: torch.Tensor, upper: torch.Tensor, generator: torch.Generator) -> LESState:
        """Mean uniform in the box, sigma = sigma_init, paths zero."""
        d = len(lower)
        m = lower + (upper - lower) * torch.rand(d, generator=generator, dtype=lower.dtype)
        zeros = torch.zeros(len(PATH_RATES), d, dtype=lower.dtype)
        return LESState(m, torch.full((d,), self.sigma_init, dtype=lower.dtype), zeros, zeros.clone(), float("inf"), 0)

    def weights(self, f: torch.Tensor, best: float) -> torch.Tensor:
        """Recombination weights (N,), a softmax over members of self-attended fitness tokens."""
        tokens = fitness_tokens(f, best)
        q, k = self.query(tokens), self.key(tokens)
        attention = torch.softmax(q @ k.T / q.shape[1] ** 0.5, dim=1)  # (N, N)
        return torch.softmax((attention @ self.value(tokens)).squeeze(1), dim=0)

    def update(self, state: LESState, x: torch.Tensor, f: torch.Tensor) -> LESState:
        """The new search distribution from the evaluated population x (N, d) with fitness f (N,)."""
        w = self.weights(f, state.best)
        diff = x - state.m  # (N, d)
        y_c = w @ diff
        y_sigma = y_c / state.sigma
        path_c = (1 - self.rates) * state.path_c + self.rates * y_c
        path_sigma = (1 - self.rates) * state.path_sigma + self.rates * y_sigma
        time = torch.tanh(state.t / self.scales).to(x.dtype).expand(x.shape[1], -1)  # (d, 8)
        lr = torch.sigmoid(self.lrate(torch.cat([path_c.T, path_sigma.T, time], dim=1)))  # (d, 2)
        m = state.m + lr[:, 0] * y_c
        spread = torch.sqrt(w @ diff ** 2 + 1e-30)
        sigma = (state.sigma + lr[:, 1] * (spread - state.sigma)).clamp_min(SIGMA_MIN)
        return LESState(m, sigma, path_c, path_sigma, min(state.best, float(f.min())), state.t + 1)

    def sample(self, state: LESState, n: int, lower: torch.Tensor, upper: torch.Tensor,
               generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        """N new points m + sigma * eps, clipped into the box, and eps (for the score-function estimate)."""
        eps = torch.randn(n, len(state.m), generator=generator, dtype=state.m.dtype)
        x = state.m + state.sigma * eps
        return torch.maximum(torch.minimum(x, upper), lower), eps


def save(path, model: LES, state: dict | None = None) -> None:
    """The sizes and the parameters (`state`, else the model's own)."""
    torch.save({"config": model.config, "state": model.state_dict() if state is None else state}, path)


def load(path) -> LES:
    saved = torch.load(path, weights_only=True)
    model = LES(**saved["config"]).double()
    model.load_state_dict(saved["state"])
    return model
