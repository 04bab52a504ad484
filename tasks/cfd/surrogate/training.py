"""Training, prediction and metrics of the point-cloud surrogates (spec §3.2, §6.2, §6.3 C1).

The caller builds the network from the config (`build`: its kind and sizes), so the loop serves any
model that maps (surface features, volume features, surface x) to the shared heads' outputs
(heads.py), may add `aux_loss` and `gate_usage`, and names its trunk_parameters() (and `blocks`,
for PCGrad on the last block).

Every kind trains for the same number of AdamW steps (lr 1e-3, wd 1e-4, cosine decay to 0, grad
clip 1.0) on the same seeded batches and point subsets (seeds derived from config.seed, not from
the kind), on targets standardized with the training split's statistics. Losses (standardized):
MSE(surface Cp) + MSE(volume) + MSE(Cd) + MSE(cumulative profile) + 0.1 (C_pred(1) - Cd_pred)^2
+ 0.01 L_bal (the model's aux_loss); with MPL the four modality losses are EMA-normalised and
PCGrad acts on the trunk.
"""
from __future__ import annotations

import math
import pickle
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import torch
from pydantic import Field, ValidationError, model_validator
from sklearn.metrics import r2_score
from torch import nn

from tasks.core.device import single_torch_thread
from tasks.core.inputs import InputError, check_readable
from tasks.core.params import Params
from tasks.core.seeding import derive_seed

from . import mpl
from .features import point_features
from .samples import Sample, Standardizer

PCGRAD_SCOPES = ("trunk", "last_block")
CONSISTENCY_WEIGHT = 0.1
BALANCE_WEIGHT = 0.01
SAVED_KEYS = ("config", "state", "standardizer", "history")  # what TrainedSurrogate.save writes
# a saved config's sizes, refused above these before the model is built or points are drawn
SAVED_SIZE_LIMITS = {"d": 4096, "blocks": 64, "heads": 256, "slices": 4096, "experts": 256, "top_k": 256,
                     "profile_bins": 4096, "surface_points": 1_000_000, "volume_points": 1_000_000}


class TrainConfig(Params):
    """One surrogate's training run and the sizes of its network. `kind` names the network for the
    caller's ModelBuilder; the whole config is saved with the weights, so that loading rebuilds the
    same network. `mpl` trains with Modality-Protected Learning (mpl.py); pcgrad_scope / pcgrad_every
    restrict its PCGrad to the last trunk block or every n-th step when its extra backward passes cost
    too much."""

    kind: str
    d: int = Field(default=64, ge=1)
    blocks: int = Field(default=3, ge=1)
    heads: int = Field(default=4, ge=1)
    slices: int = Field(default=16, ge=1)
    experts: int = Field(default=4, ge=1)
    top_k: int = Field(default=2, ge=1)
    steps: int = Field(default=700, ge=1)
    batch: int = Field(default=8, ge=1)
    lr: float = Field(default=1e-3, gt=0)
    weight_decay: float = Field(default=1e-4, ge=0)
    grad_clip: float = Field(default=1.0, gt=0)
    surface_points: int = Field(default=256, ge=1)
    volume_points: int = Field(default=512, ge=1)
    profile_bins: int = Field(default=32, ge=1)
    epsa: bool = True
    mpl: bool = False
    pcgrad_scope: Literal[PCGRAD_SCOPES] = "trunk"
    pcgrad_every: int = Field(default=1, ge=1)
    eval_every: int = Field(default=0, ge=0)
    patience: int = Field(default=0, ge=0)
    smooth_window: int = Field(default=1, ge=1)
    seed: int = 0

    @model_validator(mode="after")
    def _sizes_fit_together(self):
        if self.d % self.heads:
            raise ValueError(f"heads: must divide d = {self.d}, got {self.heads}")
        if self.top_k > self.experts:
            raise ValueError(f"top_k: must be <= experts = {self.experts}, got {self.top_k}")
        return self


def config_problem(error: ValidationError) -> str:
    """The first fault of a TrainConfig that failed validation, as 'key: rule, got value'."""
    first = error.errors()[0]
    if first["type"] == "value_error":  # _sizes_fit_together: its message names the key and the value
        return str(first["ctx"]["error"])
    key = ".".join(map(str, first["loc"]))
    if first["type"] == "missing":
        return f"{key}: required key is missing"
    return f"{key}: {first['msg'][0].lower()}{first['msg'][1:]}, got {first['input']!r}"


ModelBuilder = Callable[[TrainConfig], nn.Module]  # the network of a config's kind and sizes, freshly initialised


@dataclass
class TrainedSurrogate:
    config: TrainConfig
    model: nn.Module
    standardizer: Standardizer
    history: dict = field(default_factory=dict)

    def save(self, path: Path) -> Path:
        """torch.save of the config, state dict, standardizer and history."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        torch.save({"config": self.config.model_dump(), "state": self.model.state_dict(),
                    "standardizer": self.standardizer.to_dict(), "history": self.history}, path)
        return path

    @classmethod
    def load(cls, path: Path, build: ModelBuilder, expected: str) -> TrainedSurrogate:
        """The saved surrogate on the CPU, in eval mode, its network made by `build`. InputError,
        naming the file and what was `expected` there, when it is not one: not a torch file, another
        kind of model, sizes above SAVED_SIZE_LIMITS (refused before the model is built) or weights
        that do not match the config."""
        path = check_readable(path, "surrogate model")
        try:
            saved = torch.load(path, map_location="cpu", weights_only=True)
        except (pickle.UnpicklingError, EOFError, RuntimeError, ValueError, KeyError, IndexError, TypeError):
            raise InputError(f"surrogate model {path}: not a file written by torch.save (expected {expected})") from None
        if not (isinstance(saved, dict) and all(isinstance(saved.get(key), dict) for key in SAVED_KEYS)
                and set(saved["config"]) <= set(TrainConfig.model_fields)):
            keys = ", ".join(map(str, saved)) if isinstance(saved, dict) else type(saved).__name__
            raise InputError(f"surrogate model {path}: a torch file of another kind (holds {keys[:120]}), "
                             f"expected {expected}")
        for key, limit in SAVED_SIZE_LIMITS.items():
            value = saved["config"].get(key)
            if isinstance(value, int) and value > limit:
                raise InputError(f"surrogate model {path}: config {key} = {value:,} is over the limit of {limit:,}")
        try:
            config = TrainConfig(**saved["config"])
            model = build(config)
            model.load_state_dict(saved["state"])
            standardizer = Standardizer.from_dict(saved["standardizer"])
        except (TypeError, ValueError, RuntimeError, KeyError, AttributeError) as error:
            detail = (config_problem(error) if isinstance(error, ValidationError)
                      else (str(error).strip().splitlines() or [type(error).__name__])[0])[:160]
            raise InputError(f"surrogate model {path}: does not match this code's surrogate ({detail})") from None
        return cls(config, model.eval(), standardizer, saved["history"])


# ---------------------------------------------------------------- inputs

def sample_inputs(sample: Sample) -> dict[str, torch.Tensor]:
    """Features of all the sample's points (float32): surface [Ns, F], volume [Nv, F], surface_x [Ns]."""
    contour = torch.as_tensor(sample.contour, dtype=torch.float64)[None]
    surface = point_features(torch.as_tensor(sample.surface_points)[None], torch.as_tensor(sample.surface_normals)[None],
                             contour, is_surface=True)
    volume = point_features(torch.as_tensor(sample.volume_points)[None], None, contour, is_surface=False)
    return {"surface": surface[0].float(), "volume": volume[0].float(),
            "surface_x": torch.as_tensor(sample.surface_points[:, 0], dtype=torch.float32)}


class Batches:
    """Seeded minibatches: shuffled passes over the samples; per sample a random subset of
    surface_points surface and volume_points volume points (the same for every model kind)."""

    def __init__(self, samples: list[Sample], standardizer: Standardizer, config: TrainConfig):
        for s in samples:
            if len(s.surface_points) < config.surface_points or len(s.volume_points) < config.volume_points:
                raise ValueError(f"surface_points/volume_points: sample {s.index} has {len(s.surface_points)}/"
                                 f"{len(s.volume_points)} points, the config asks for {config.surface_points}/"
                                 f"{config.volume_points}")
        self.inputs = [sample_inputs(s) for s in samples]
        self.targets = [{k: torch.as_tensor(v, dtype=torch.float32) for k, v in standardizer.standardized(s).items()}
                        for s in samples]
        self.config = config
        self.generator = torch.Generator().manual_seed(derive_seed(config.seed, "batches"))
        self.order: list[int] = []

    def next(self) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
        if len(self.order) < self.config.batch:
            self.order += torch.randperm(len(self.inputs), generator=self.generator).tolist()
        chosen, self.order = self.order[:self.config.batch], self.order[self.config.batch:]
        inputs, targets = [], []
        for i in chosen:
            s = torch.randperm(len(self.inputs[i]["surface"]), generator=self.generator)[:self.config.surface_points]
            v = torch.randperm(len(self.inputs[i]["volume"]), generator=self.generator)[:self.config.volume_points]
            x, y = self.inputs[i], self.targets[i]
            inputs.append({"surface": x["surface"][s], "volume": x["volume"][v], "surface_x": x["surface_x"][s]})
            targets.append({"cd": y["cd"], "profile": y["profile"], "surface_cp": y["surface_cp"][s],
                            "volume": y["volume"][v]})
        return stack(inputs), stack(targets)


def stack(rows: list[dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    return {k: torch.stack([r[k] for r in rows]) for k in rows[0]}


# ---------------------------------------------------------------- training

def modality_losses(out: dict[str, torch.Tensor], target: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Standardized MSE per output modality."""
    return {m: (out[m] - target[m]).pow(2).mean() for m in ("surface_cp", "volume", "cd", "profile")}


def extra_loss(out: dict[str, torch.Tensor], standardizer: Standardizer) -> torch.Tensor:
    """0.1 (C_pred(1) - Cd_pred)^2 (on the standardized Cd scale) + 0.01 L_bal; added unnormalised,
    outside PCGrad."""
    consistency = (standardizer.profile_end_in_cd_units(out["profile"][:, -1]) - out["cd"]).pow(2).mean()
    return CONSISTENCY_WEIGHT * consistency + BALANCE_WEIGHT * out.get("aux_loss", consistency.new_zeros(()))


def pcgrad_parameters(model: nn.Module, scope: str) -> list[nn.Parameter]:
    return list(model.trunk_parameters()) if scope == "trunk" else list(model.blocks[-1].parameters())


def train_surrogate(config: TrainConfig, build: ModelBuilder, train: list[Sample], val: list[Sample],
                    standardizer: Standardizer) -> TrainedSurrogate:
    """Up to config.steps AdamW steps of the network `build` makes (after seeding its initialisation)
    on `train` (one torch thread, deterministic for a given config and builder), with early stopping
    on R^2_Cd of `val` when config.eval_every > 0 and `val` is not empty (EarlyStopping: patience counted on the
    median of the last config.smooth_window evaluations, the best evaluation's weights kept).

    history: per step `loss` (the plain sum of the four standardized MSEs), `surface_cp`, `volume`,
    `cd`, `profile` (each modality's MSE), `lr`, `conflict_rate` (PCGrad's conflicting pairs / pairs
    checked; nan on steps without PCGrad), `gate_usage` ([4][E] mean gate probability per modality,
    models that report it only); and `seconds`, `seconds_per_step`, `steps_run`, `val_curve` ([step, val
    R^2_Cd] per evaluation), `smoothed_curve` ([step, the stopping rule's median]), `best_step` (the weights kept),
    `val` (metrics() on `val`, if any)."""
    single_torch_thread()
    torch.manual_seed(derive_seed(config.seed, "init"))
    model = build(config)
    batches = Batches(train, standardizer, config)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: 0.5 * (1 + math.cos(math.pi * step / config.steps)))
    normalizer = mpl.LossNormalizer() if config.mpl else None
    projection = torch.Generator().manual_seed(derive_seed(config.seed, "pcgrad"))
    shared = pcgrad_parameters(model, config.pcgrad_scope) if config.mpl else []
    history = {k: [] for k in ("loss", "surface_cp", "volume", "cd", "profile", "lr", "conflict_rate", "gate_usage")}
    stopping = EarlyStopping(config.patience, config.smooth_window) if config.eval_every and val else None
    started = time.perf_counter()
    model.train()
    steps_run = 0
    for step in range(config.steps):
        inputs, targets = batches.next()
        out = model(inputs["surface"], inputs["volume"], inputs["surface_x"])
        losses = modality_losses(out, targets)
        optimizer.zero_grad(set_to_none=False)
        use_pcgrad = config.mpl and step % config.pcgrad_every == 0
        stats = mpl.backward(losses, extra_loss(out, standardizer), shared, normalizer, projection if use_pcgrad else None)
        nn.utils.clip_grad_norm_(model.parameters(), config.grad_clip)
        history["lr"].append(schedule.get_last_lr()[0])
        optimizer.step()
        schedule.step()
        history["loss"].append(float(sum(losses.values()).detach()))
        for name, loss in losses.items():
            history[name].append(float(loss.detach()))
        history["conflict_rate"].append(stats["conflict_rate"])
        if "gate_usage" in out:
            history["gate_usage"].append(out["gate_usage"].tolist())
        steps_run = step + 1
        if stopping is not None and (steps_run % config.eval_every == 0 or steps_run == config.steps):
            score = metrics(TrainedSurrogate(config, model, standardizer), val)["r2_cd"]
            model.train()
            if stopping.update(steps_run, score, model):
                break
    seconds = time.perf_counter() - started
    history |= {"seconds": seconds, "seconds_per_step": seconds / steps_run, "steps_run": steps_run}
    if stopping is not None:
        model.load_state_dict(stopping.best_state)
        history |= {"val_curve": stopping.curve, "smoothed_curve": stopping.smoothed_curve,
                    "best_step": stopping.best_step}
    trained = TrainedSurrogate(config, model.eval(), standardizer, history)
    if val:
        history["val"] = metrics(trained, val)
    return trained


class EarlyStopping:
    """The best validation score so far and its weights (the weights kept), and whether `patience` evaluations
    passed without a new best of the smoothed score, the median of the last `window` scores (counted from the
    window-th evaluation on; window 1: the score itself). With a window of 3 or more one outlying evaluation is never
    the median, so a single validation spike cannot set a best that the evaluations after it must beat
    (patience 0: never stop early)."""

    def __init__(self, patience: int, window: int = 1):
        if window < 1:
            raise ValueError(f"window: must be >= 1, got {window}")
        self.patience, self.window, self.curve, self.smoothed_curve = patience, window, [], []
        self.best_step, self.best_state, self.best_score = 0, None, -math.inf
        self.best_smoothed, self.waited = -math.inf, 0

    def update(self, step: int, score: float, model: nn.Module) -> bool:
        self.curve.append([step, score])
        if score > self.best_score:
            self.best_score, self.best_step = score, step
            self.best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        if len(self.curve) < self.window:  # a median of fewer scores could be a spike (the max of two)
            return False
        smoothed = float(np.median([s for _, s in self.curve[-self.window:]]))
        self.smoothed_curve.append([step, smoothed])
        if smoothed > self.best_smoothed:
            self.best_smoothed, self.waited = smoothed, 0
            return False
        self.waited += 1
        return 0 < self.patience <= self.waited


# ---------------------------------------------------------------- prediction and metrics

def predict(trained: TrainedSurrogate, samples: list[Sample]) -> list[dict[str, np.ndarray | float]]:
    """Physical-unit predictions on all points of each sample: cd (float), profile [K], surface_cp
    [Ns], volume [Nv, 3] (u_x/U, u_z/U, Cp). Eval mode: no Gumbel noise."""
    trained.model.eval()
    rows = []
    with torch.no_grad():
        for sample in samples:
            x = sample_inputs(sample)
            out = trained.model(x["surface"][None], x["volume"][None], x["surface_x"][None])
            physical = trained.standardizer.physical(out)
            rows.append({"cd": float(physical["cd"][0])} | {k: physical[k][0].double().numpy()
                                                             for k in ("profile", "surface_cp", "volume")})
    return rows


def predict_cd(trained: TrainedSurrogate, surface_points: torch.Tensor, surface_normals: torch.Tensor,
               volume_points: torch.Tensor, contour: torch.Tensor) -> torch.Tensor:
    """Predicted Cd (physical, the shape's own reference area) of one shape, as a scalar tensor
    differentiable w.r.t. surface_points [Ns, 2], surface_normals [Ns, 2], volume_points [Nv, 2] and
    contour [K, 2] (body units; the volume points' distance feature is recomputed from `contour`).
    Eval mode (no Gumbel noise); the model's parameters are not differentiated."""
    model = trained.model.eval()
    dtype = next(model.parameters()).dtype
    surface = point_features(surface_points[None], surface_normals[None], contour[None], is_surface=True)
    volume = point_features(volume_points[None], None, contour[None], is_surface=False)
    out = model(surface.to(dtype), volume.to(dtype), surface_points[None, :, 0].detach().to(dtype))
    return trained.standardizer.physical(out)["cd"][0].to(surface_points.dtype)


def relative_l2(pred: np.ndarray, true: np.ndarray) -> float:
    return float(np.linalg.norm(pred - true) / max(np.linalg.norm(true), 1e-12))


def metrics(trained_or_predictions: TrainedSurrogate | list[dict], samples: list[Sample]) -> dict[str, float]:
    """r2_cd: sklearn r2_score of Cd over the samples; surface_cp_rel_l2: mean over samples of
    |Cp_pred - Cp|_2 / |Cp|_2 over the surface points; volume_rel_l2: the same over all volume
    points and the three channels (u_x/U, u_z/U, Cp) together; profile_mae: mean |C_pred - C| over
    samples and the K profile bins. Physical units throughout."""
    predictions = (predict(trained_or_predictions, samples) if isinstance(trained_or_predictions, TrainedSurrogate)
                   else trained_or_predictions)
    if len(predictions) != len(samples):
        raise ValueError(f"trained_or_predictions: {len(predictions)} predictions for {len(samples)} samples")
    return {"r2_cd": float(r2_score([s.cd for s in samples], [p["cd"] for p in predictions])),
            "surface_cp_rel_l2": float(np.mean([relative_l2(p["surface_cp"], s.surface_cp)
                                                for p, s in zip(predictions, samples)])),
            "volume_rel_l2": float(np.mean([relative_l2(p["volume"], s.volume_target)
                                            for p, s in zip(predictions, samples)])),
            "profile_mae": float(np.mean([np.abs(p["profile"] - s.profile).mean() for p, s in zip(predictions, samples)]))}
