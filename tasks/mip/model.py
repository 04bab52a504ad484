"""The learned gap predictor (spec §3.3-3.5): normaliser, bounded LSTM, loss, training.

Reading order: `Normalizer` (one affine map per feature column), `GapLSTM` (causal LSTM whose
output is a fraction of the solver's own gap U - L), `relative_l1_loss` (the code's `RescaledMSE2`),
`train` (the minibatch loop), `save_model` / `load_model`.

Units. The network sees normalised features x~ = (x - mu) / (s + 1). Because the `ub` column
reuses the `lb` column's (mu, s), U~ - L~ = (U - L) / (s_lb + 1), so the bounded output
g~ = ½ (tanh o + 1) (U~ - L~) in normalised units is the absolute gap g = g~ (s_lb + 1)
= ½ (tanh o + 1) (U - L) in objective units. The loss and all predictions use absolute units.

Only eligible rows (tasks/mip/features.py: finite bounds, root node done) are inputs, targets
and normaliser data; `predict` gives +inf on the other rows, so no rule can stop there.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from tasks.mip.features import FEATURES, LB, UB, eligible_rows, feature_matrix
from tasks.mip.trajectory import Trajectory

# ---------------------------------------------------------------------------------------------
# Normalisation (§3.3)


@dataclass
class Normalizer:
    """Per-column affine map x~ = (x - mu) / (scale + 1), NaN -> 0; target y~ = y / (scale_lb + 1)."""

    mu: np.ndarray  # (F,)
    scale: np.ndarray  # (F,) = 10 * std of the column over all eligible training samples

    @classmethod
    def fit(cls, trajectories: list[Trajectory]) -> Normalizer:
        """Stack every eligible sample of the training trajectories; mu = mean, scale = 10 * std
        (ddof 0). The `ub` column takes the `lb` column's mu and scale, so both bounds share one map."""
        X = np.concatenate([feature_matrix(traj) for traj in trajectories] or [np.empty((0, len(FEATURES)))], axis=0)
        if len(X) == 0:
            raise ValueError("Normalizer.fit: the training trajectories have no eligible row (finite bounds, root done)")
        mu, scale = np.nanmean(X, axis=0), 10.0 * np.nanstd(X, axis=0)
        mu[UB], scale[UB] = mu[LB], scale[LB]
        return cls(mu=mu, scale=scale)

    @property
    def s_lb(self) -> float:
        return float(self.scale[LB])

    def transform(self, X: np.ndarray) -> np.ndarray:
        """Normalised features, float32, same shape as X (..., F)."""
        Xn = (np.asarray(X, dtype=float) - self.mu) / (self.scale + 1.0)
        return np.nan_to_num(Xn, nan=0.0).astype(np.float32)

    def target(self, y: np.ndarray) -> np.ndarray:
        """Normalised target y~ = y / (s_lb + 1) (no mean shift)."""
        return np.asarray(y, dtype=float) / (self.s_lb + 1.0)

    def to_dict(self) -> dict:
        return {"columns": list(FEATURES), "mu": [float(v) for v in self.mu],
                "scale": [float(v) for v in self.scale]}

    @classmethod
    def from_dict(cls, d: dict) -> Normalizer:
        if list(d.get("columns", [])) != list(FEATURES):
            raise ValueError(f"Normalizer.from_dict: columns {d.get('columns')} do not match FEATURES {list(FEATURES)}")
        return cls(mu=np.asarray(d["mu"], dtype=float), scale=np.asarray(d["scale"], dtype=float))


# ---------------------------------------------------------------------------------------------
# Network (§3.4)


class GapLSTM(nn.Module):
    """Causal LSTM over the samples of one solve + linear head, output bounded by the solver's gap.

    The hidden state starts at zero for every trajectory. `normalizer` (set by `train` and
    `load_model`) is what `step` and `predict` use when none is passed.
    """

    def __init__(self, n_features: int = len(FEATURES), hidden: int = 64, layers: int = 2):
        super().__init__()
        if n_features != len(FEATURES):
            raise ValueError(f"GapLSTM: n_features must be {len(FEATURES)} (columns {FEATURES}), got {n_features}")
        if hidden < 1 or layers < 1:
            raise ValueError(f"GapLSTM: hidden and layers must be >= 1, got hidden={hidden}, layers={layers}")
        self.config = {"n_features": n_features, "hidden": hidden, "layers": layers}
        self.lstm = nn.LSTM(n_features, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, 1)
        self.normalizer: Normalizer | None = None

    def fraction(self, x: torch.Tensor, state=None):
        """Fraction ½(tanh o + 1) in [0, 1] of the gap U - L the network predicts.
        x: (B, K, F) normalised features -> (B, K), and the LSTM state ((layers, B, H) twice)."""
        h, state = self.lstm(x, state)  # (B, K, H)
        o = self.head(h).squeeze(-1)  # (B, K)
        return 0.5 * (torch.tanh(o) + 1.0), state

    def forward(self, x: torch.Tensor, state=None):
        """Bounded gap g~ = ½(tanh o + 1)(U~ - L~) in normalised units: (B, K, F) -> (B, K), state."""
        frac, state = self.fraction(x, state)
        width = (x[..., UB] - x[..., LB]).clamp(min=0.0)  # (B, K); U~ - L~ = (U - L) / (s_lb + 1)
        return frac * width, state

    def _normalizer(self, normalizer: Normalizer | None) -> Normalizer:
        normalizer = normalizer if normalizer is not None else self.normalizer
        if normalizer is None:
            raise ValueError("GapLSTM: no normalizer given and none attached to the model (train or load_model sets one)")
        return normalizer

    @torch.no_grad()
    def step(self, x_row: np.ndarray, state=None, normalizer: Normalizer | None = None):
        """Online inference on one raw feature row (a `FeatureStream.push` result): returns
        (absolute predicted gap, new state). Pass state=None on the first sample of a solve.

        The absolute gap is computed as fraction * max(U - L, 0) in float64, which equals
        g~ (s_lb + 1) in exact arithmetic and keeps 0 <= g <= U - L exact in floating point.
        """
        x_row = np.asarray(x_row, dtype=float)
        xt = torch.from_numpy(self._normalizer(normalizer).transform(x_row)).reshape(1, 1, -1)
        frac, state = self.fraction(xt, state)
        return float(frac.item()) * max(float(x_row[UB] - x_row[LB]), 0.0), state

    @torch.no_grad()
    def predict(self, traj: Trajectory, normalizer: Normalizer | None = None) -> np.ndarray:
        """Absolute predicted gaps (K,) along a whole trajectory: one causal pass over its eligible
        rows (the same numbers as `step` on them), +inf on the rows that are not eligible."""
        out = np.full(len(traj), np.inf)
        X = feature_matrix(traj)
        if len(X) == 0:
            return out
        xt = torch.from_numpy(self._normalizer(normalizer).transform(X))[None]
        param = next(self.parameters())
        frac, _ = self.fraction(xt.to(param.device))
        width = np.maximum(X[:, UB] - X[:, LB], 0.0)
        out[eligible_rows(traj)] = frac[0].double().cpu().numpy() * width
        return out


# ---------------------------------------------------------------------------------------------
# Loss (§3.5)


def relative_l1_loss(pred: torch.Tensor, y: torch.Tensor, eps_a: float) -> torch.Tensor:
    """Weighted relative L1 of the code's `RescaledMSE2`, pred and y in absolute units.

    m = [eps_a/10 <= y <= 10 eps_a] ("in"), N_in / N_out the counts over the whole batch,
    w = (10 m / (N_in + 1) + (1 - m) / (N_out + 1)) / 11,
    loss = mean over all positions (padding included) of w |pred - y| / (|y| + eps_a).
    """
    if not eps_a > 0:
        raise ValueError(f"relative_l1_loss: eps_a must be > 0, got {eps_a}")
    m = ((y >= eps_a / 10) & (y <= 10 * eps_a)).to(pred.dtype)
    n_in = m.sum()
    n_out = m.numel() - n_in
    w = (10.0 * m / (n_in + 1.0) + (1.0 - m) / (n_out + 1.0)) / 11.0
    return (w * (pred - y).abs() / (y.abs() + eps_a)).mean()


# ---------------------------------------------------------------------------------------------
# Training


def _pad_batch(xs: list[torch.Tensor], ys: list[torch.Tensor]):
    """Pad to the longest by repeating the last row and the last target: (B, K, F), (B, K)."""
    K = max(len(x) for x in xs)
    X = torch.stack([torch.cat([x, x[-1:].expand(K - len(x), -1)]) for x in xs])
    Y = torch.stack([torch.cat([y, y[-1:].expand(K - len(y))]) for y in ys])
    return X, Y


def _tensors(trajectories: list[Trajectory], normalizer: Normalizer):
    """Inputs and targets of the eligible rows; a solve without any (done at the root) is left out."""
    used = [traj for traj in trajectories if eligible_rows(traj).any()]
    xs = [torch.from_numpy(normalizer.transform(feature_matrix(traj))) for traj in used]
    ys = [torch.from_numpy(np.asarray(traj.y[eligible_rows(traj)], dtype=np.float32)) for traj in used]
    return xs, ys


def dataset_loss(model: GapLSTM, normalizer: Normalizer, trajectories: list[Trajectory], eps_a: float) -> float:
    """The training loss over all given trajectories as one padded batch (for curves and checks)."""
    xs, ys = _tensors(trajectories, normalizer)
    X, Y = _pad_batch(xs, ys)
    param = next(model.parameters())
    with torch.no_grad():
        g_tilde, _ = model(X.to(param.device))
        return float(relative_l1_loss(g_tilde * (normalizer.s_lb + 1.0), Y.to(param.device), eps_a))


def _check_train_args(trajectories, hidden, layers, steps, batch, lr, eps_a, clip, log_every):
    checks = [
        ("trajectories", len(trajectories), len(trajectories) >= 1, "at least one trajectory"),
        ("hidden", hidden, hidden >= 1, ">= 1"), ("layers", layers, layers >= 1, ">= 1"),
        ("steps", steps, steps >= 0, ">= 0"), ("batch", batch, batch >= 1, ">= 1"),
        ("lr", lr, lr > 0, "> 0"), ("eps_a", eps_a, eps_a > 0, "> 0"),
        ("clip", clip, clip > 0, "> 0"), ("log_every", log_every, log_every >= 1, ">= 1"),
    ]
    for name, value, ok, rule in checks:
        if not ok:
            raise ValueError(f"train: {name} must be {rule}, got {value}")
    if not any(eligible_rows(traj).any() for traj in trajectories):
        raise ValueError("train: no trajectory has an eligible row (finite bounds, root node done)")


def train(
    trajectories: list[Trajectory],
    *,
    hidden: int,
    layers: int,
    steps: int,
    batch: int,
    lr: float,
    eps_a: float,
    seed: int,
    clip: float = 1.0,
    log_every: int = 10,
    device: str = "cpu",
    threads: int | None = None,
) -> tuple[GapLSTM, Normalizer, list[tuple[int, float]]]:
    """Fit the normaliser, then `steps` Adam steps on batches of `batch` whole trajectories
    (their eligible rows; solves finished at the root have none and are left out).

    Batches are drawn with replacement by a torch.Generator seeded with `seed`; the weights are
    initialised under the same seed inside a forked RNG, so the global torch RNG is untouched and
    the same seed gives the same numbers. The gradient norm is clipped to `clip` before each step.
    Returns (model on CPU in eval mode with the normaliser attached, normaliser, curve) where the
    curve holds (step, minibatch loss) at step 1, every `log_every` steps and the last step.
    `threads`, when given, is passed to torch.set_num_threads.
    """
    _check_train_args(trajectories, hidden, layers, steps, batch, lr, eps_a, clip, log_every)
    if threads is not None:
        torch.set_num_threads(threads)
    normalizer = Normalizer.fit(trajectories)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = GapLSTM(len(FEATURES), hidden, layers)
    model.to(device)
    xs, ys = _tensors(trajectories, normalizer)
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    scale = normalizer.s_lb + 1.0
    curve: list[tuple[int, float]] = []
    model.train()
    for step in range(1, steps + 1):
        idx = torch.randint(len(xs), (batch,), generator=generator).tolist()
        X, Y = _pad_batch([xs[i] for i in idx], [ys[i] for i in idx])
        X, Y = X.to(device), Y.to(device)
        g_tilde, _ = model(X)  # (B, K) normalised units
        loss = relative_l1_loss(g_tilde * scale, Y, eps_a)  # absolute units
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        if step == 1 or step % log_every == 0 or step == steps:
            curve.append((step, float(loss.item())))
    model.to("cpu").eval()
    model.normalizer = normalizer
    return model, normalizer, curve


# ---------------------------------------------------------------------------------------------
# Persistence


def save_model(path: Path, model: GapLSTM, normalizer: Normalizer, meta: dict | None = None) -> None:
    """One torch file: weights, architecture, normaliser and meta (family, eps_a, ...; plain types)."""
    state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    torch.save({"state_dict": state, "config": dict(model.config), "normalizer": normalizer.to_dict(),
                "meta": dict(meta or {})}, Path(path))


def load_model(path: Path, *, family: str | None = None) -> tuple[GapLSTM, Normalizer, dict]:
    """Inverse of `save_model`. With `family`, refuse a model whose meta names another family."""
    blob = torch.load(Path(path), map_location="cpu", weights_only=True)
    meta = blob.get("meta", {})
    if family is not None and meta.get("family") != family:
        raise ValueError(f"load_model: {path} was trained for family {meta.get('family')!r}, not {family!r}")
    model = GapLSTM(**blob["config"])
    model.load_state_dict(blob["state_dict"])
    model.eval()
    normalizer = Normalizer.from_dict(blob["normalizer"])
    model.normalizer = normalizer
    return model, normalizer, meta
